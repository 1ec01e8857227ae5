/**
 * The JDBC plumbing every store shares, in one place: one statement on a pooled connection ({@link
 * dev.outboxrelay.outbox.jdbc.JdbcStatements}), several statements as one short transaction ({@link
 * dev.outboxrelay.outbox.jdbc.JdbcTransactions}), a unit of work run again when the database chose
 * it as a deadlock victim ({@link dev.outboxrelay.outbox.jdbc.ConflictRetry}), the rows a statement
 * returns, mapped ({@link dev.outboxrelay.outbox.jdbc.Rows}), and text cut to its column ({@link
 * dev.outboxrelay.outbox.jdbc.Columns}). No SQL lives here: statements come from the dialects
 * ({@code store.dialect}), which this package does not depend on (nor they on it).
 */
package dev.outboxrelay.outbox.jdbc;
