package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** The reconciliation SQL on an in-memory H2 database. */
class H2ReconciliationStoreIT extends ReconciliationStoreContractTest {
  private static final DataSource H2 = TestDatabases.h2();

  @Override
  protected DataSource dataSource() {
    return H2;
  }
}
