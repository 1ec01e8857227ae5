package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** The inbox contract on an in-memory H2 database. */
class H2InboxIT extends InboxContractTest {
  private static final DataSource H2 = TestDatabases.h2();

  @Override
  protected DataSource dataSource() {
    return H2;
  }
}
