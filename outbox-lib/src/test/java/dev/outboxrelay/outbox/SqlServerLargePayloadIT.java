package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.RequiresSqlServer;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Large payloads by reference on SQL Server, database {@value SqlServerOutboxEnqueueIT#DATABASE};
 * skipped by name with the reason where no SQL Server is reachable.
 */
@ExtendWith(RequiresSqlServer.class)
class SqlServerLargePayloadIT extends LargePayloadContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.sqlServer(SqlServerOutboxEnqueueIT.DATABASE);
  }

  /** No CREATE TABLE IF NOT EXISTS on SQL Server. */
  @Override
  protected String createDocumentsTableSql(String name) {
    return "IF OBJECT_ID(N'" + name + "') IS NULL CREATE TABLE " + name
        + " (id BIGINT PRIMARY KEY, note NVARCHAR(100) NOT NULL)";
  }
}
