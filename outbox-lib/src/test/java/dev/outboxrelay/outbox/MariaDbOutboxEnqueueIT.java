package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** Enqueue in the caller's transaction on the local MariaDB, database {@value #DATABASE}. */
class MariaDbOutboxEnqueueIT extends OutboxEnqueueContractTest {
  static final String DATABASE = "outbox_lib_enqueue_it";

  @Override
  protected DataSource dataSource() {
    return TestDatabases.mariadb(DATABASE);
  }
}
