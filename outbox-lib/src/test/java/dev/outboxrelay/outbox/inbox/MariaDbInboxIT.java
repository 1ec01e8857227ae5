package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** The inbox contract on MariaDB, database {@value #DATABASE}. */
class MariaDbInboxIT extends InboxContractTest {
  static final String DATABASE = "outbox_lib_inbox_it";

  @Override
  protected DataSource dataSource() {
    return TestDatabases.mariadb(DATABASE);
  }
}
