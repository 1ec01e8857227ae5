/**
 * SQL dialects: the only place where SQL lives. {@link
 * dev.outboxrelay.outbox.store.dialect.OutboxDialect} holds the statements every database
 * shares, built from a few fragments (database clock, "now plus n milliseconds"); a subclass
 * overrides only what differs (claim, insert-if-absent). Each quirk carries a one-line comment.
 * Dialects: PostgreSQL, H2, MariaDB 10.6+, SQL Server 2017+ (the last not yet run against a
 * server). Tokens and times are bound and read through the dialect ({@code bindUuid}, {@code
 * readInstant}, ...), so the store stays database-neutral; {@code isRetryableConflict} marks
 * deadlock victims the store may run again. {@link
 * dev.outboxrelay.outbox.store.dialect.ReconciliationDialect} holds the reconciliation's
 * statements, one subclass per database ({@code ReconciliationDialect.of(outboxDialect)}); its
 * store binds and reads times and tells unique violations through the outbox dialect's hooks.
 */
package dev.outboxrelay.outbox.store.dialect;
