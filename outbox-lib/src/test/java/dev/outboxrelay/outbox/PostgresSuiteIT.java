package dev.outboxrelay.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.outbox.inbox.InboxContractTest;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedMessage;
import dev.outboxrelay.outbox.store.ConfiguredNamesContractTest;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.OutboxAdminStoreContractTest;
import dev.outboxrelay.outbox.store.OutboxStoreContractTest;
import dev.outboxrelay.outbox.store.ReconciliationStoreContractTest;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.store.dialect.PostgresOutboxDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Every store contract on the local PostgreSQL, schema {@value TestDatabases#OUTBOX_LIB_SCHEMA}
 * (the configured-names contract in schemas {@code names_it} and {@code names_it_b}). One nested
 * class per contract; what only PostgreSQL needs is in its nested class.
 */
class PostgresSuiteIT {

  /** The claim/complete contract, plus the claim's limit under any join plan. */
  @Nested
  class Store extends OutboxStoreContractTest {
    /** Leaves the planner only nested loops without materialisation: the sub-select is re-run per row. */
    private static final String NESTED_LOOPS_ONLY = "-c enable_hashagg=off -c enable_hashjoin=off"
        + " -c enable_mergejoin=off -c enable_memoize=off -c enable_material=off -c enable_sort=off";

    @Override
    protected DataSource dataSource() {
      return TestDatabases.postgres();
    }

    @Override
    protected Class<? extends OutboxDialect> expectedDialect() {
      return PostgresOutboxDialect.class;
    }

    /**
     * Regression: {@code UPDATE ... WHERE id IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)} planned
     * as a nested-loop semi join re-runs the locking sub-select for every outer row, and each re-run
     * skips the rows already updated, so the claim took every ready row instead of {@code n}. The
     * planner picks that plan by itself on a freshly created, never analysed table.
     */
    @Test
    void claimHonoursItsLimitWhateverJoinPlanThePlannerPicks() {
      List<Long> ready = TestDatabases.insertReady(ds, 20);
      DataSource nestedLoops = TestDatabases.postgres(TestDatabases.OUTBOX_LIB_SCHEMA, NESTED_LOOPS_ONLY);
      JdbcOutboxStore claimer = new JdbcOutboxStore(nestedLoops, store.dialect());
      List<ClaimedMessage> claimed = claimer.claimBatch(ClaimRequest.of(3, LEASE));
      assertEquals(ready.subList(0, 3), ids(claimed));
      assertEquals(counts(17, 3, 0, 0, 0), admin.countByState());
    }
  }

  /** The store contract on an outbox with configured names, next to the default-named one. */
  @Nested
  class ConfiguredNames extends ConfiguredNamesContractTest {
    @Override
    protected DataSource dataSource() {
      return preparedOnce(() -> {
        TestDatabases.postgres(OTHER_SCHEMA.schema().orElseThrow());
        return TestDatabases.postgres(NAMES.schema().orElseThrow());
      });
    }

    @Override
    protected Class<? extends OutboxDialect> expectedDialect() {
      return PostgresOutboxDialect.class;
    }
  }

  /** The store's operator statements. */
  @Nested
  class AdminStore extends OutboxAdminStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.postgres();
    }
  }

  /** The reconciliation SQL. */
  @Nested
  class Reconciliation extends ReconciliationStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.postgres();
    }
  }

  /** Enqueue in the caller's transaction. */
  @Nested
  class Enqueue extends OutboxEnqueueContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.postgres();
    }
  }

  /** Large payloads by reference. */
  @Nested
  class LargePayload extends LargePayloadContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.postgres();
    }
  }

  /** The inbox contract. */
  @Nested
  class Inbox extends InboxContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.postgres();
    }
  }
}
