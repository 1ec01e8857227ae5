/**
 * Plain JDBC for the demo's own tables (sink ledger, invoices, report queries). {@link Jdbc} works
 * on the default Agroal datasource: inside a JTA transaction every statement runs on that
 * transaction's connection, outside one each statement auto-commits. SQL errors become {@link
 * DataAccessException}, which keeps the SQL state so callers can tell a unique-key violation from a
 * failure.
 */
package dev.outboxrelay.demo.jdbc;
