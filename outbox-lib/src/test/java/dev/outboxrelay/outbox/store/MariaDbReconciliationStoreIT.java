package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/**
 * The reconciliation SQL on the local MariaDB, database {@value MariaDbOutboxStoreIT#DATABASE}, in a session
 * time zone other than UTC (see {@link TestDatabases}).
 */
class MariaDbReconciliationStoreIT extends ReconciliationStoreContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.mariadb(MariaDbOutboxStoreIT.DATABASE);
  }
}
