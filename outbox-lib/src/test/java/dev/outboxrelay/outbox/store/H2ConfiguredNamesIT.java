package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.store.dialect.H2OutboxDialect;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** {@link ConfiguredNamesContractTest} on an in-memory H2 database of its own. */
class H2ConfiguredNamesIT extends ConfiguredNamesContractTest {
  private static final DataSource DATABASE = withNamedOutboxes(TestDatabases.h2());

  @Override
  protected DataSource dataSource() {
    return DATABASE;
  }

  @Override
  protected Class<? extends OutboxDialect> expectedDialect() {
    return H2OutboxDialect.class;
  }
}
