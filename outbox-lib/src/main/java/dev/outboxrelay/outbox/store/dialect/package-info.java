/**
 * SQL dialects: the only place where SQL lives (besides the migration scripts). One final class per
 * database ({@link dev.outboxrelay.outbox.store.dialect.PostgresDialect}, {@link
 * dev.outboxrelay.outbox.store.dialect.MariaDbDialect}, {@link
 * dev.outboxrelay.outbox.store.dialect.H2Dialect}, {@link
 * dev.outboxrelay.outbox.store.dialect.SqlServerDialect}; the last not yet run against a server),
 * composed of small parts: its clock ({@link dev.outboxrelay.outbox.store.dialect.SqlClock}: now,
 * "now plus n milliseconds", the statement's own time), how its driver binds tokens and times
 * ({@link dev.outboxrelay.outbox.store.dialect.TypeBinding}; MariaDB and SQL Server share one) and
 * what its errors mean ({@link dev.outboxrelay.outbox.store.dialect.ErrorCodes}). The abstract
 * {@link dev.outboxrelay.outbox.store.dialect.Dialect} builds the statements the databases share
 * from those parts, one family of statements to a class, each extending the one below ({@code
 * SqlFragments}, {@code ClaimSql}, {@code TransitionSql}, {@code AdminSql}, {@code
 * ReconciliationSql}, then {@code Dialect} with the inbox's); a database's class extends {@code
 * Dialect} and overrides only what differs, each quirk with a one-line comment.
 *
 * <p>The stores see statement sets, rendered once for an outbox's table names when the store is
 * made: {@link dev.outboxrelay.outbox.store.dialect.JobStatements} (enqueue, claim, transitions,
 * reaper, retention), {@link dev.outboxrelay.outbox.store.dialect.AdminStatements}, {@link
 * dev.outboxrelay.outbox.store.dialect.ReconciliationStatements} (with the fleet lock) and {@link
 * dev.outboxrelay.outbox.store.dialect.InboxStatements}. A dialect renders and binds; it never runs
 * a statement: the stores run them and map the rows. {@link
 * dev.outboxrelay.outbox.store.dialect.DialectDetector} is the one registry of databases ({@code
 * names()}), used by the stores, the inbox and the relay. {@link
 * dev.outboxrelay.outbox.store.dialect.OutboxTables} are the outbox's table names, the only
 * configured text that reaches SQL: every statement is written with the default names and rendered
 * through them.
 */
package dev.outboxrelay.outbox.store.dialect;
