package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.store.dialect.PostgresOutboxDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/**
 * {@link ConfiguredNamesContractTest} on the local PostgreSQL: schemas {@code names_it} (the
 * connections' schema, with a default-named outbox too) and {@code names_it_b}.
 */
class PostgresConfiguredNamesIT extends ConfiguredNamesContractTest {
  private static final DataSource DATABASE = database();

  private static DataSource database() {
    TestDatabases.postgres(OTHER_SCHEMA.schema().orElseThrow());
    return withNamedOutboxes(TestDatabases.postgres(NAMES.schema().orElseThrow()));
  }

  @Override
  protected DataSource dataSource() {
    return DATABASE;
  }

  @Override
  protected Class<? extends OutboxDialect> expectedDialect() {
    return PostgresOutboxDialect.class;
  }
}
