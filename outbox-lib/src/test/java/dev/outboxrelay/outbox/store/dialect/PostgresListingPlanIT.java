package dev.outboxrelay.outbox.store.dialect;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.JobQuery;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The plans PostgreSQL picks for the console's job lists on an analysed table where few jobs are
 * dead (schema {@value #SCHEMA} of its own): a keyset page walks an index in id order (the dead
 * jobs' partial index, the ready one, or the primary key) instead of reading the table whole, so a
 * page costs its size, with the filters applied as bound conditions on the way.
 */
class PostgresListingPlanIT {
  static final String SCHEMA = "postgres_listing_plan_it";
  static DataSource ds;
  static final PostgresDialect DIALECT = new PostgresDialect();

  @BeforeAll
  static void table() {
    ds = TestDatabases.postgres(SCHEMA);
    TestDatabases.reset(ds);
    TestDatabases.insertReady(ds, 20_000);
    TestDatabases.execute(
        ds,
        "UPDATE outbox_message SET state = CASE WHEN id % 100 = 0 THEN 'D' ELSE 'S' END"
            + " WHERE id % 10 <> 1");
    TestDatabases.execute(ds, "ANALYZE outbox_message");
    TestDatabases.execute(ds, "ANALYZE outbox_attempt");
  }

  @AfterAll
  static void clean() {
    TestDatabases.reset(ds);
  }

  private static String plan(JobQuery q) throws SQLException {
    BoundSql sql =
        DIALECT.listJobs(
            new Listing(
                q.state(),
                q.destination(),
                q.orderingKey(),
                q.errorClass(),
                q.operationIdContains(),
                q.from(),
                q.to(),
                q.afterId(),
                q.limit()));
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("EXPLAIN (COSTS OFF) " + sql.sql())) {
      List<Object> params = sql.params();
      for (int i = 0; i < params.size(); i++) {
        if (params.get(i) instanceof Instant t) {
          DIALECT.binding().bindInstant(ps, i + 1, t);
        } else {
          ps.setObject(i + 1, params.get(i));
        }
      }
      return String.join("\n", Rows.list(ps, rs -> rs.getString(1)));
    }
  }

  @Test
  void deadJobsByDestinationErrorClassAndTimeWalkTheDeadIndex() throws SQLException {
    Instant now = Instant.now();
    for (JobQuery q :
        List.of(
            new JobQuery('D', null, null, 0, 51),
            new JobQuery('D', TestDatabases.HTTP_BILLING, null, 100, 51),
            new JobQuery('D', null, null, null, null, now.minusSeconds(3600), now, 0, 51),
            new JobQuery(
                'D',
                TestDatabases.HTTP_BILLING,
                null,
                "HTTP 422",
                null,
                now.minusSeconds(3600),
                null,
                0,
                51))) {
      String plan = plan(q);
      assertTrue(
          plan.contains("using ix_outbox_message_dead on outbox_message m"), q + ":\n" + plan);
      assertFalse(plan.contains("Seq Scan on outbox_message"), q + ":\n" + plan);
    }
  }

  @Test
  void readyJobsWalkTheReadyIndexAndUnfilteredPagesThePrimaryKey() throws SQLException {
    String ready = plan(new JobQuery('R', TestDatabases.HTTP_BILLING, null, 0, 51));
    assertTrue(ready.contains("ix_outbox_message_ready"), ready);
    String any = plan(new JobQuery(null, TestDatabases.HTTP_BILLING, null, 5_000, 51));
    assertTrue(any.contains("outbox_message_pkey"), any);
    assertFalse(any.contains("Seq Scan on outbox_message"), any);
  }

  /**
   * The backlog gauges read ready and leased jobs only: from the index of unfinished jobs (V8),
   * never the table whole, history included, as they did once the deliver_after index was gone.
   */
  @Test
  void theBacklogGaugesReadTheUnfinishedJobsIndex() throws SQLException {
    for (String sql : List.of(DIALECT.oldestReadySql(), DIALECT.backlogByDestinationSql())) {
      String plan;
      try (Connection c = ds.getConnection();
          PreparedStatement ps = c.prepareStatement("EXPLAIN (COSTS OFF) " + sql)) {
        plan = String.join("\n", Rows.list(ps, rs -> rs.getString(1)));
      }
      assertTrue(plan.contains("ix_outbox_message_ready"), sql + ":\n" + plan);
      assertFalse(plan.contains("Seq Scan on outbox_message"), sql + ":\n" + plan);
    }
  }
}
