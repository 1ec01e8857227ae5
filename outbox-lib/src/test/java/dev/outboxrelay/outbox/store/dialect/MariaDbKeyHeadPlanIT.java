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
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The MariaDB claim's locking scan on a backlog concentrated on busy keys (database {@value
 * #DATABASE}), measured with {@code ANALYZE FORMAT=JSON}: the rows each table access read ({@code
 * r_rows} over {@code r_loops}), the key check's probes included. With every key's head in flight
 * the waiting jobs are not read; with heads to claim, each candidate's key check still reads about
 * its key's ready jobs.
 */
class MariaDbKeyHeadPlanIT {
  static final String DATABASE = "mariadb_key_head_plan_it";
  private static final ObjectMapper JSON = new ObjectMapper();
  static DataSource ds;

  @BeforeEach
  void empty() {
    ds = TestDatabases.mariadb(DATABASE);
    TestDatabases.reset(ds);
  }

  @Test
  void aClaimReadsNoWaitingJobOfTheBusyKeys() throws Exception {
    TestDatabases.insertKeyedBacklog(ds, 8, 5000);
    assertEquals(8, claim(32), "one job per key");
    long eight = lockingScanReads();
    System.out.println(
        "ANALYZE mariadb keys=8 per_key=5000 in_flight=8 limit=32 rows_read=" + eight);
    assertTrue(eight <= 8, "the 39,992 waiting jobs are not read: " + eight);

    TestDatabases.reset(ds);
    TestDatabases.insertKeyedBacklog(ds, 100, 500);
    assertEquals(64, claim(64));
    // Not yet bounded by the batch: each candidate's key check reads about its key's ready jobs
    // (16,032 rows for 32 candidates measured), the open point of docs/performance.md "Key heads".
    long hundred = lockingScanReads();
    System.out.println(
        "ANALYZE mariadb keys=100 per_key=500 in_flight=64 limit=32 rows_read=" + hundred);
    assertTrue(hundred < 100L * 500, "less than the backlog: " + hundred);
  }

  private static int claim(int limit) throws Exception {
    try (Connection c = ds.getConnection()) {
      return new JdbcOutboxStore(ds, new MariaDbDialect())
          .claimOn(c, ClaimRequest.of(limit, Duration.ofMinutes(1)))
          .size();
    }
  }

  /**
   * ANALYZE of the claim's locking scan (limit 32), rolled back: rows read by every table access.
   */
  private static long lockingScanReads() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      c.setAutoCommit(false);
      try (PreparedStatement ps =
          c.prepareStatement("ANALYZE FORMAT=JSON " + new MariaDbDialect().lockReadySql())) {
        ps.setInt(1, 32);
        String plan = String.join("", Rows.list(ps, rs -> rs.getString(1)));
        return rowsRead(JSON.readTree(plan));
      } finally {
        c.rollback();
      }
    }
  }

  private static long rowsRead(JsonNode node) {
    long read = 0;
    if (node.has("table_name") && node.has("r_rows")) {
      read += Math.round(node.path("r_loops").asDouble(1) * node.path("r_rows").asDouble());
    }
    for (JsonNode child : node) {
      read += rowsRead(child);
    }
    return read;
  }
}
