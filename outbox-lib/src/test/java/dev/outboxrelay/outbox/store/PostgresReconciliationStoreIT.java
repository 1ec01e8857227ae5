package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** The reconciliation SQL on the local PostgreSQL, schema {@value TestDatabases#OUTBOX_LIB_SCHEMA}. */
class PostgresReconciliationStoreIT extends ReconciliationStoreContractTest {
  @Override
  protected DataSource dataSource() {
    return TestDatabases.postgres();
  }
}
