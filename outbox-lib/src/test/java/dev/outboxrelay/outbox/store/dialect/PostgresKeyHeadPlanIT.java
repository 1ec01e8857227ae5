package dev.outboxrelay.outbox.store.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a claim reads on a backlog concentrated on busy keys (schema {@value #SCHEMA} of its own),
 * measured with {@code EXPLAIN (ANALYZE, BUFFERS)}: the rows every scan of {@code outbox_message}
 * returned or filtered out, over all its loops. Before {@code key_wait} the claim walked every
 * later job of a key whose head was in flight, one {@code NOT EXISTS} each; now it reads the ready
 * heads it claims (once in the locking sub-select, once in the update's seek) and nothing of the
 * waiting jobs. The rows stay in the schema after the run, for a look with {@code psql}.
 */
class PostgresKeyHeadPlanIT {
  static final String SCHEMA = "postgres_key_head_plan_it";
  private static final ObjectMapper JSON = new ObjectMapper();
  static DataSource ds;

  @BeforeEach
  void empty() {
    ds = TestDatabases.postgres(SCHEMA);
    // Emptied without dead rows, as autovacuum is off on this table (backlog).
    TestDatabases.execute(ds, "TRUNCATE outbox_message CASCADE");
  }

  @Test
  void aClaimOnAHundredKeysOfFiveHundredJobsReadsItsBatchNotTheWaitingJobs() throws Exception {
    backlog(100, 500);
    assertEquals(64, claim(64), "64 keys in flight");
    long read = claimOf32Reads("keys=100 per_key=500 in_flight=64");
    assertTrue(
        read <= 2 * 32 + 64,
        "reads the batch and at most the keys in flight, not the backlog: " + read);

    assertEquals(36, claim(64), "every key in flight");
    long idle = claimOf32Reads("keys=100 per_key=500 in_flight=100");
    assertTrue(idle <= 100, "nothing to claim, and nearly nothing read: " + idle);
  }

  @Test
  void aClaimOnEightKeysOfFiveThousandJobsReadsNoWaitingJob() throws Exception {
    backlog(8, 5000);
    assertEquals(8, claim(32), "one job per key");
    long read = claimOf32Reads("keys=8 per_key=5000 in_flight=8");
    assertTrue(read <= 8, "the 39,992 waiting jobs are not read: " + read);
  }

  /** The rows a claim of 32 reads now, printed with {@code backlog} for the record. */
  private static long claimOf32Reads(String backlog) throws Exception {
    long read = rowsRead(32);
    System.out.println("EXPLAIN " + backlog + " limit=32 rows_read=" + read);
    return read;
  }

  /**
   * The backlog, analysed: the plan is the one a relay meets once autovacuum has seen the table.
   */
  private static void backlog(int keys, int perKey) throws SQLException {
    // No autovacuum on this table: its analyze, started by the 50,000 inserts, could land after
    // ours and replace the full statistics with a default sample (the 608-row plan came back once
    // with the full statistics, in a helper's run of every IT).
    TestDatabases.execute(ds, "ALTER TABLE outbox_message SET (autovacuum_enabled = false)");
    TestDatabases.insertKeyedBacklog(ds, keys, perKey);
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      // Statistics of every row, not of ANALYZE's random sample of 30,000 (the default target):
      // on a sample the planner now and then chose a plan that read 608 rows, in CI and on a
      // loaded host alike, so the figure depended on the draw.
      s.execute("SET default_statistics_target = 1000");
      s.execute("ANALYZE outbox_message");
    }
  }

  private static int claim(int limit) throws SQLException {
    try (Connection c = ds.getConnection()) {
      return new JdbcOutboxStore(ds, new PostgresDialect())
          .claimOn(c, ClaimRequest.of(limit, Duration.ofMinutes(1)))
          .size();
    }
  }

  /**
   * Runs the claim under EXPLAIN ANALYZE, rolled back; the rows its scans of outbox_message read.
   */
  private static long rowsRead(int limit) throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement(
              "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + new PostgresDialect().claimSql())) {
        ps.setObject(1, UUID.randomUUID());
        ps.setLong(2, 60_000);
        ps.setInt(3, limit);
        String plan = String.join("", Rows.list(ps, rs -> rs.getString(1)));
        return rowsRead(JSON.readTree(plan).get(0).get("Plan"));
      } finally {
        c.rollback();
      }
    }
  }

  private static long rowsRead(JsonNode node) {
    long read = 0;
    if ("outbox_message".equals(node.path("Relation Name").asText())) {
      long loops = node.path("Actual Loops").asLong(1);
      read +=
          loops
              * (node.path("Actual Rows").asLong()
                  + node.path("Rows Removed by Filter").asLong()
                  + node.path("Rows Removed by Index Recheck").asLong());
    }
    for (JsonNode child : node.path("Plans")) {
      read += rowsRead(child);
    }
    return read;
  }
}
