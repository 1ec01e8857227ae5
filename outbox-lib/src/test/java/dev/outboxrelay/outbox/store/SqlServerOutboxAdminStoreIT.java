package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.testing.RequiresSqlServer;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The store's operator statements on SQL Server, database {@value SqlServerOutboxStoreIT#DATABASE}; skipped by name with
 * the reason where no SQL Server is reachable.
 */
@ExtendWith(RequiresSqlServer.class)
class SqlServerOutboxAdminStoreIT extends OutboxAdminStoreContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.sqlServer(SqlServerOutboxStoreIT.DATABASE);
  }
}
