package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** The store's operator statements on the local PostgreSQL, schema {@value TestDatabases#OUTBOX_LIB_SCHEMA}. */
class PostgresOutboxAdminStoreIT extends OutboxAdminStoreContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.postgres();
  }
}
