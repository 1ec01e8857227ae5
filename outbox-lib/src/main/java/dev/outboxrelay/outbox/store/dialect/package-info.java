/**
 * SQL dialects: the only place where SQL lives. {@link
 * dev.outboxrelay.outbox.store.dialect.OutboxDialect} holds the statements every database
 * shares, built from a few fragments (database clock, "now plus n milliseconds"); a subclass
 * overrides only what differs (claim, insert-if-absent). Each quirk carries a one-line comment.
 */
package dev.outboxrelay.outbox.store.dialect;
