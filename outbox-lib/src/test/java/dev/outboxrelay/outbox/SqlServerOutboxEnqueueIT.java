package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.RequiresSqlServer;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Enqueue in the caller's transaction on SQL Server, database {@value #DATABASE}; skipped by name
 * with the reason where no SQL Server is reachable.
 */
@ExtendWith(RequiresSqlServer.class)
class SqlServerOutboxEnqueueIT extends OutboxEnqueueContractTest {
  static final String DATABASE = "outbox_lib_enqueue_it";

  @Override
  protected DataSource dataSource() {
    return TestDatabases.sqlServer(DATABASE);
  }

  /** No CREATE TABLE IF NOT EXISTS on SQL Server. */
  @Override
  protected String createOrdersTableSql(String name) {
    return "IF OBJECT_ID(N'" + name + "') IS NULL CREATE TABLE " + name
        + " (id BIGINT PRIMARY KEY, note NVARCHAR(100) NOT NULL)";
  }
}
