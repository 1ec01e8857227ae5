package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** Large payloads by reference on the local PostgreSQL. */
class PostgresLargePayloadIT extends LargePayloadContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.postgres();
  }
}
