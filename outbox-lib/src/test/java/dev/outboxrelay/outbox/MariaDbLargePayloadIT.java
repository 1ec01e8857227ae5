package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.TestDatabases;
import javax.sql.DataSource;

/** Large payloads by reference on the local MariaDB, database {@value MariaDbOutboxEnqueueIT#DATABASE}. */
class MariaDbLargePayloadIT extends LargePayloadContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.mariadb(MariaDbOutboxEnqueueIT.DATABASE);
  }
}
