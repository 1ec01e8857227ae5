package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.store.dialect.MariaDbOutboxDialect;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/**
 * {@link ConfiguredNamesContractTest} on the local MariaDB: databases {@code names_it} (the
 * connections' database, with a default-named outbox too) and {@code names_it_b}, both created
 * as {@link TestDatabases} creates test databases (binary collation).
 */
class MariaDbConfiguredNamesIT extends ConfiguredNamesContractTest {
  private static final DataSource DATABASE = database();

  private static DataSource database() {
    TestDatabases.mariadb(OTHER_SCHEMA.schema().orElseThrow());
    return withNamedOutboxes(TestDatabases.mariadb(NAMES.schema().orElseThrow()));
  }

  @Override
  protected DataSource dataSource() {
    return DATABASE;
  }

  @Override
  protected Class<? extends OutboxDialect> expectedDialect() {
    return MariaDbOutboxDialect.class;
  }

  @Override
  protected String lockThreeRowsSql() {
    return MariaDbOutboxStoreIT.LOCK_THREE_ROWS_SQL;
  }
}
