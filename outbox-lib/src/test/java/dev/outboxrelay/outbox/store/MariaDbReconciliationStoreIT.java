package dev.outboxrelay.outbox.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.TestDatabases;
import java.time.Instant;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The reconciliation SQL on the local MariaDB, database {@value MariaDbOutboxStoreIT#DATABASE}, in
 * a session time zone other than UTC (see {@link TestDatabases}).
 */
class MariaDbReconciliationStoreIT extends ReconciliationStoreContractTest {

  @Override
  protected DataSource dataSource() {
    return TestDatabases.mariadb(MariaDbOutboxStoreIT.DATABASE);
  }

  /**
   * Regression: MariaDB's clock has millisecond steps, and a release that ended the lease at
   * "now" left it live for the rest of that millisecond (taking needs lease_until < now), so a
   * relay taking the lock in the same millisecond was refused (seen once in a full build). Here
   * every statement runs at the same instant.
   */
  @Test
  void aReleasedLockIsFreeWithinTheSameMillisecond() {
    JdbcReconciliationStore frozen = JdbcReconciliationStore.create(
        TestDatabases.mariadbFrozenClock(MariaDbOutboxStoreIT.DATABASE, Instant.parse("2030-01-01T00:00:00.123Z")));
    String name = ReconciliationStore.RECONCILIATION_LOCK;
    assertTrue(frozen.acquireLock(name, "relay-a", LEASE));
    frozen.releaseLock(name, "relay-a");
    assertTrue(frozen.lockHolder(name).orElseThrow().expired(), "released: expired at once");
    assertTrue(frozen.acquireLock(name, "relay-b", LEASE), "free in the release's millisecond");
    assertEquals("relay-b", frozen.lockHolder(name).orElseThrow().owner());
  }
}
