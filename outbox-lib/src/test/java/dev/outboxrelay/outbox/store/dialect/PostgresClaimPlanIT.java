package dev.outboxrelay.outbox.store.dialect;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The plans PostgreSQL picks for the relay's two hot statements on a backlog of analysed ready rows
 * (schema {@value #SCHEMA} of its own): the claim runs its locking sub-select once and seeks the
 * picked ids by index (the ready index or the primary key); the batched completion seeks each id by
 * primary key. A plan that scans {@code outbox_message} whole would make every claim or completion
 * cost the backlog.
 */
class PostgresClaimPlanIT {
  static final String SCHEMA = "postgres_claim_plan_it";
  static DataSource ds;

  @BeforeAll
  static void backlog() {
    ds = TestDatabases.postgres(SCHEMA);
    TestDatabases.reset(ds);
    TestDatabases.insertReady(ds, 20_000);
    TestDatabases.execute(ds, "ANALYZE outbox_message");
  }

  @AfterAll
  static void clean() {
    TestDatabases.reset(ds);
  }

  private static String plan(String sql, Binder binder) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("EXPLAIN (COSTS OFF) " + sql)) {
      binder.bind(c, ps);
      return String.join("\n", Rows.list(ps, rs -> rs.getString(1)));
    }
  }

  @FunctionalInterface
  interface Binder {
    void bind(Connection c, PreparedStatement ps) throws SQLException;
  }

  @Test
  void theClaimLocksItsBatchOnceAndSeeksThePickedIds() throws SQLException {
    String plan =
        plan(
            new PostgresDialect().claimSql(),
            (c, ps) -> {
              ps.setObject(1, UUID.randomUUID());
              ps.setLong(2, 30_000);
              ps.setInt(3, 32);
            });
    assertTrue(
        plan.contains("InitPlan"), "the locking sub-select runs once, as an InitPlan:\n" + plan);
    // Either index seeks the picked ids: the ready index on (state, id), or the primary key with
    // the state re-checked as a filter; the planner picks between them on the table's statistics
    // (both plans seen on the same 20,000-row backlog).
    assertTrue(
        (plan.contains("Index Scan using ix_outbox_message_ready on outbox_message m")
                && plan.contains("Index Cond: ((state = 'R'::bpchar) AND (id = ANY ("))
            || (plan.contains("Index Scan using outbox_message_pkey on outbox_message m")
                && plan.contains("Index Cond: (id = ANY (")),
        "the update seeks the picked ids:\n" + plan);
    assertTrue(plan.contains("LockRows"), plan);
    assertFalse(plan.contains("Seq Scan"), plan);
  }

  @Test
  void theBatchedCompletionSeeksEachJobByItsKey() throws SQLException {
    PostgresDialect dialect = new PostgresDialect();
    String plan =
        plan(
            dialect
                .markDeliveredAll(
                    Collections.nCopies(64, 1L), Collections.nCopies(64, UUID.randomUUID()))
                .sql(),
            (c, ps) -> {
              ps.setArray(1, c.createArrayOf("bigint", Collections.nCopies(64, 1L).toArray()));
              ps.setArray(
                  2, c.createArrayOf("uuid", Collections.nCopies(64, UUID.randomUUID()).toArray()));
            });
    assertFalse(plan.contains("Seq Scan on outbox_message"), plan);
    assertTrue(
        List.of("outbox_message_pkey", "ix_outbox_message_lease").stream().anyMatch(plan::contains),
        "by primary key (or the few leased rows):\n" + plan);
  }
}
