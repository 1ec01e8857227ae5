package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** The inbox contract on the local PostgreSQL. */
class PostgresInboxIT extends InboxContractTest {
  @Override
  protected DataSource dataSource() {
    return TestDatabases.postgres();
  }
}
