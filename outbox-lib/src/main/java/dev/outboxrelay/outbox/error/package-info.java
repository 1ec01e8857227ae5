/**
 * The exceptions every layer of the library shares, at the bottom so that the stores, the dialects,
 * the JDBC plumbing and the migrations can throw them without depending on the public facade above:
 * {@link dev.outboxrelay.outbox.error.OutboxException}, the root of the library's exceptions, and
 * {@link dev.outboxrelay.outbox.error.OutboxStoreException}, a database failure (a driver error
 * becomes one at the store boundary, naming the operation). The exceptions that refuse a caller's
 * input live next to what throws them ({@code InvalidMessageException} with {@code Outbox}, the
 * inbox's in {@code inbox}).
 */
package dev.outboxrelay.outbox.error;
