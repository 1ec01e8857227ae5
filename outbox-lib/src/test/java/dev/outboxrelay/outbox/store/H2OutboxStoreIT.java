package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.store.dialect.H2OutboxDialect;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** The store contract on an in-memory H2 database. */
class H2OutboxStoreIT extends OutboxStoreContractTest {
  private static final DataSource H2 = TestDatabases.h2();

  @Override
  protected DataSource dataSource() {
    return H2;
  }

  @Override
  protected Class<? extends OutboxDialect> expectedDialect() {
    return H2OutboxDialect.class;
  }
}
