package dev.outboxrelay.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.inbox.InboxContractTest;
import dev.outboxrelay.outbox.store.ConfiguredNamesContractTest;
import dev.outboxrelay.outbox.store.JdbcFleetLock;
import dev.outboxrelay.outbox.store.OutboxAdminStoreContractTest;
import dev.outboxrelay.outbox.store.OutboxStoreContractTest;
import dev.outboxrelay.outbox.store.ReconciliationStore;
import dev.outboxrelay.outbox.store.ReconciliationStoreContractTest;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.MariaDbDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.time.Instant;
import javax.sql.DataSource;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Every store contract on the local MariaDB, in a session time zone other than UTC (see {@link
 * TestDatabases}): the store, admin and reconciliation contracts in database {@value #STORE},
 * enqueue and large payloads in {@value #ENQUEUE}, the inbox in {@value #INBOX}, the
 * configured-names contract in {@code names_it} and {@code names_it_b}. Databases are created as
 * {@link TestDatabases} creates test databases (binary collation).
 */
class MariaDbSuiteIT {
  static final String STORE = "outbox_lib_store_it";
  static final String ENQUEUE = "outbox_lib_enqueue_it";
  static final String INBOX = "outbox_lib_inbox_it";

  /**
   * By the primary key: on a table this small the optimizer scans a whole secondary index for
   * {@code id IN (...)}, and under REPEATABLE READ InnoDB keeps a lock on every row it scanned, so
   * the "other transaction" would hold all six jobs instead of three.
   */
  static final String LOCK_THREE_ROWS_SQL =
      "SELECT id FROM outbox_message FORCE INDEX (PRIMARY) WHERE id IN (?, ?, ?) FOR UPDATE";

  /** The claim/complete contract. */
  @Nested
  class Store extends OutboxStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.mariadb(STORE);
    }

    @Override
    protected Class<? extends Dialect> expectedDialect() {
      return MariaDbDialect.class;
    }

    @Override
    protected String lockThreeRowsSql() {
      return LOCK_THREE_ROWS_SQL;
    }
  }

  /** The store contract on an outbox with configured names, next to the default-named one. */
  @Nested
  class ConfiguredNames extends ConfiguredNamesContractTest {
    @Override
    protected DataSource dataSource() {
      return preparedOnce(
          () -> {
            TestDatabases.mariadb(OTHER_SCHEMA.schema().orElseThrow());
            return TestDatabases.mariadb(NAMES.schema().orElseThrow());
          });
    }

    @Override
    protected Class<? extends Dialect> expectedDialect() {
      return MariaDbDialect.class;
    }

    @Override
    protected String lockThreeRowsSql() {
      return LOCK_THREE_ROWS_SQL;
    }
  }

  /** The store's operator statements. */
  @Nested
  class AdminStore extends OutboxAdminStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.mariadb(STORE);
    }
  }

  /** The reconciliation SQL, plus the fleet lock within one millisecond. */
  @Nested
  class Reconciliation extends ReconciliationStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.mariadb(STORE);
    }

    /**
     * Regression: MariaDB's clock has millisecond steps, and a release that ended the lease at
     * "now" left it live for the rest of that millisecond (taking needs lease_until < now), so a
     * relay taking the lock in the same millisecond was refused (seen once in a full build). Here
     * every statement runs at the same instant.
     */
    @Test
    void aReleasedLockIsFreeWithinTheSameMillisecond() {
      JdbcFleetLock frozen =
          JdbcFleetLock.create(
              TestDatabases.mariadbFrozenClock(STORE, Instant.parse("2030-01-01T00:00:00.123Z")));
      String name = ReconciliationStore.RECONCILIATION_LOCK;
      assertTrue(frozen.acquire(name, "relay-a", LEASE));
      frozen.release(name, "relay-a");
      assertTrue(frozen.holder(name).orElseThrow().expired(), "released: expired at once");
      assertTrue(frozen.acquire(name, "relay-b", LEASE), "free in the release's millisecond");
      assertEquals("relay-b", frozen.holder(name).orElseThrow().owner());
    }
  }

  /** Enqueue in the caller's transaction. */
  @Nested
  class Enqueue extends OutboxEnqueueContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.mariadb(ENQUEUE);
    }
  }

  /** Large payloads by reference. */
  @Nested
  class LargePayload extends LargePayloadContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.mariadb(ENQUEUE);
    }
  }

  /** The inbox contract. */
  @Nested
  class Inbox extends InboxContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.mariadb(INBOX);
    }
  }
}
