package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.testing.RequiresSqlServer;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The inbox contract on SQL Server, database {@value #DATABASE}; skipped by name with the reason
 * where no SQL Server is reachable.
 */
@ExtendWith(RequiresSqlServer.class)
class SqlServerInboxIT extends InboxContractTest {
  static final String DATABASE = "outbox_lib_inbox_it";

  @Override
  protected DataSource dataSource() {
    return TestDatabases.sqlServer(DATABASE);
  }

  /** No CREATE TABLE IF NOT EXISTS on SQL Server. */
  @Override
  protected String createEffectTableSql() {
    return "IF OBJECT_ID(N'" + EFFECT + "') IS NULL CREATE TABLE " + EFFECT
        + " (operation_id NVARCHAR(200) NOT NULL, note NVARCHAR(200))";
  }
}
