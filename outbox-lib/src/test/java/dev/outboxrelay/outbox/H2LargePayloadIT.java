package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** Large payloads by reference on an in-memory H2 database. */
class H2LargePayloadIT extends LargePayloadContractTest {
  private static final DataSource H2 = TestDatabases.h2();

  @Override
  protected DataSource dataSource() {
    return H2;
  }
}
