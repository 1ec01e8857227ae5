package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** Enqueue in the caller's transaction on the local PostgreSQL. */
class PostgresOutboxEnqueueIT extends OutboxEnqueueContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.postgres();
  }
}
