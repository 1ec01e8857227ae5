package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/**
 * The store's operator statements on the local MariaDB, database {@value MariaDbOutboxStoreIT#DATABASE}, in a session
 * time zone other than UTC (see {@link TestDatabases}).
 */
class MariaDbOutboxAdminStoreIT extends OutboxAdminStoreContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.mariadb(MariaDbOutboxStoreIT.DATABASE);
  }
}
