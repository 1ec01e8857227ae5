package dev.outboxrelay.outbox;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.outbox.inbox.InboxContractTest;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.ConfiguredNamesContractTest;
import dev.outboxrelay.outbox.store.Confirmation;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.JdbcReconciliationStore;
import dev.outboxrelay.outbox.store.OutboxAdminStoreContractTest;
import dev.outboxrelay.outbox.store.OutboxStoreContractTest;
import dev.outboxrelay.outbox.store.ReconciliationStoreContractTest;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.PostgresDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Every store contract on the local PostgreSQL, schema {@value TestDatabases#OUTBOX_LIB_SCHEMA}
 * (the configured-names contract in schemas {@code names_it} and {@code names_it_b}). One nested
 * class per contract; what only PostgreSQL needs is in its nested class. Connections are pooled
 * ({@link TestDatabases#pooled}): a fresh PostgreSQL connection per store call made this suite
 * several times slower than the same contracts on MariaDB.
 */
class PostgresSuiteIT {

  /** The claim/complete contract, plus the claim's limit under any join plan. */
  @Nested
  class Store extends OutboxStoreContractTest {
    /**
     * Leaves the planner only nested loops without materialisation: the sub-select is re-run per
     * row.
     */
    private static final String NESTED_LOOPS_ONLY =
        "-c enable_hashagg=off -c enable_hashjoin=off"
            + " -c enable_mergejoin=off -c enable_memoize=off -c enable_material=off -c enable_sort=off";

    @Override
    protected DataSource dataSource() {
      return TestDatabases.pooled(TestDatabases.postgres());
    }

    @Override
    protected Class<? extends Dialect> expectedDialect() {
      return PostgresDialect.class;
    }

    /**
     * Regression: {@code UPDATE ... WHERE id IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)}
     * planned as a nested-loop semi join re-runs the locking sub-select for every outer row, and
     * each re-run skips the rows already updated, so the claim took every ready row instead of
     * {@code n}. The planner picks that plan by itself on a freshly created, never analysed table.
     */
    @Test
    void claimHonoursItsLimitWhateverJoinPlanThePlannerPicks() {
      List<Long> ready = TestDatabases.insertReady(ds, 20);
      DataSource nestedLoops =
          TestDatabases.postgres(TestDatabases.OUTBOX_LIB_SCHEMA, NESTED_LOOPS_ONLY);
      JdbcOutboxStore claimer = new JdbcOutboxStore(nestedLoops, store.dialect());
      List<ClaimedJob> claimed = claimer.claimBatch(ClaimRequest.of(3, LEASE));
      assertEquals(ready.subList(0, 3), ids(claimed));
      assertEquals(counts(17, 3, 0, 0, 0), admin.countByState());
    }
  }

  /** The store contract on an outbox with configured names, next to the default-named one. */
  @Nested
  class ConfiguredNames extends ConfiguredNamesContractTest {
    @Override
    protected DataSource dataSource() {
      return preparedOnce(
          () -> {
            TestDatabases.postgres(OTHER_SCHEMA.schema().orElseThrow());
            return TestDatabases.pooled(TestDatabases.postgres(NAMES.schema().orElseThrow()));
          });
    }

    @Override
    protected Class<? extends Dialect> expectedDialect() {
      return PostgresDialect.class;
    }
  }

  /** The store's operator statements. */
  @Nested
  class AdminStore extends OutboxAdminStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.pooled(TestDatabases.postgres());
    }
  }

  /** The reconciliation SQL, plus a deadlock victim run again. */
  @Nested
  class Reconciliation extends ReconciliationStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.pooled(TestDatabases.postgres());
    }

    /**
     * The reconciliation store re-runs a deadlock victim as the outbox store does: another
     * transaction holds confirmation {@code b}, the store's batch writes {@code a} and waits for
     * {@code b}, then the other transaction writes {@code a}. The store's session checks for a
     * deadlock after 3 s, the other's only after a minute, so PostgreSQL rolls back the store's
     * transaction (40P01); the store runs the batch again once {@code b} is committed, and the
     * caller sees both confirmations stored and no error.
     */
    @Test
    void aConfirmationBatchChosenAsADeadlockVictimIsRunAgain() throws Exception {
      JdbcReconciliationStore victim =
          new JdbcReconciliationStore(
              TestDatabases.postgres(TestDatabases.OUTBOX_LIB_SCHEMA, "-c deadlock_timeout=3s"),
              store.dialect());
      long deadlocksBefore = deadlocks();
      ExecutorService caller = Executors.newSingleThreadExecutor();
      try (Connection other = ds.getConnection()) {
        try (Statement st = other.createStatement()) {
          st.execute("SET deadlock_timeout = '60s'");
        }
        other.setAutoCommit(false);
        confirm(other, "deadlock-b");
        Future<Integer> upserted =
            caller.submit(
                () ->
                    victim.upsertConfirmations(
                        List.of(
                            new Confirmation("deadlock-a", "http:billing", now, 1, "test"),
                            new Confirmation("deadlock-b", "http:billing", now, 1, "test"))));
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    TestDatabases.queryLong(
                            ds,
                            "SELECT COUNT(*) FROM"
                                + " pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO outbox_confirmation%'")
                        == 1);
        confirm(other, "deadlock-a"); // returns once the store's transaction was rolled back
        other.commit();
        assertEquals(2, upserted.get(30, TimeUnit.SECONDS));
      } finally {
        caller.shutdownNow();
      }
      assertEquals(
          2,
          TestDatabases.queryLong(
              ds,
              "SELECT COUNT(*) FROM outbox_confirmation WHERE operation_id LIKE 'deadlock-%' AND source = 'test'"));
      await().atMost(Duration.ofSeconds(30)).until(() -> deadlocks() > deadlocksBefore);
    }

    private void confirm(Connection c, String operationId) throws SQLException {
      try (PreparedStatement ps = c.prepareStatement(store.statements().upsertConfirmationSql())) {
        ps.setString(1, operationId);
        ps.setString(2, "http:billing");
        store.dialect().binding().bindInstant(ps, 3, now);
        ps.setInt(4, 1);
        ps.setString(5, "other");
        ps.executeUpdate();
      }
    }

    /**
     * The deadlocks PostgreSQL resolved in this database so far (its statistics, flushed within a
     * second).
     */
    private long deadlocks() {
      return TestDatabases.queryLong(
          ds, "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
    }
  }

  /** Enqueue in the caller's transaction. */
  @Nested
  class Enqueue extends OutboxEnqueueContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.pooled(TestDatabases.postgres());
    }
  }

  /** Large payloads by reference. */
  @Nested
  class LargePayload extends LargePayloadContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.pooled(TestDatabases.postgres());
    }
  }

  /** The inbox contract. */
  @Nested
  class Inbox extends InboxContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.pooled(TestDatabases.postgres());
    }
  }
}
