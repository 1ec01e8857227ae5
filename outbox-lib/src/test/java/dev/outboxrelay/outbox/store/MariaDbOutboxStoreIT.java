package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.store.dialect.MariaDbOutboxDialect;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/**
 * The store contract on the local MariaDB, database {@value #DATABASE}, in a session time zone
 * other than UTC (see {@link TestDatabases}).
 */
class MariaDbOutboxStoreIT extends OutboxStoreContractTest {
  static final String DATABASE = "outbox_lib_store_it";

  @Override
  protected DataSource dataSource() {
    return TestDatabases.mariadb(DATABASE);
  }

  @Override
  protected Class<? extends OutboxDialect> expectedDialect() {
    return MariaDbOutboxDialect.class;
  }

  /**
   * By the primary key: on a table this small the optimizer scans a whole secondary index for
   * {@code id IN (...)}, and under REPEATABLE READ InnoDB keeps a lock on every row it scanned,
   * so the "other transaction" would hold all six jobs instead of three.
   */
  static final String LOCK_THREE_ROWS_SQL =
      "SELECT id FROM outbox_message FORCE INDEX (PRIMARY) WHERE id IN (?, ?, ?) FOR UPDATE";

  @Override
  protected String lockThreeRowsSql() {
    return LOCK_THREE_ROWS_SQL;
  }
}
