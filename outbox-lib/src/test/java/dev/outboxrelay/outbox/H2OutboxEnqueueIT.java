package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** Enqueue in the caller's transaction on an in-memory H2 database. */
class H2OutboxEnqueueIT extends OutboxEnqueueContractTest {
  private static final DataSource H2 = TestDatabases.h2();

  @Override
  protected DataSource dataSource() {
    return H2;
  }
}
