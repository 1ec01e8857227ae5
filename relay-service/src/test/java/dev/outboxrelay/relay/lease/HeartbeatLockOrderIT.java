package dev.outboxrelay.relay.lease;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.store.dialect.PostgresDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The batched heartbeat's row locks on real PostgreSQL. Guards against the deadlock seen in {@code
 * ManyRelaysChaosIT} at large scale on a loaded host (2 s lease): the heartbeat statements of
 * several relays deadlocked with each other (each waiting {@code deadlock_timeout}, 1 s, before
 * PostgreSQL killed one), and the claims they should have renewed expired. The statement locked its
 * rows in whatever order its join met them; here two transactions renew the same claims, one
 * handing them in ascending and one in descending id order (the nested loop over the id array that
 * the sessions are held to takes them in that order), while a third transaction holds the middle
 * row, so both are under way when it lets go. Locked in the plan's order they wait for each other;
 * locked in id order the second waits behind the first, and both renew every claim.
 */
class HeartbeatLockOrderIT {
  static final String SCHEMA = "relay_heartbeat_locks";
  private static final PostgresDialect DIALECT = new PostgresDialect();
  static final Duration LEASE = Duration.ofSeconds(30);
  static final int CLAIMS = 40;

  final ExecutorService renewers = Executors.newFixedThreadPool(2);

  @AfterEach
  void tearDown() {
    renewers.shutdownNow();
  }

  @Test
  void twoRenewalsOfTheSameClaimsInOppositeOrderWaitForEachOtherWithoutADeadlock()
      throws Exception {
    DataSource ds = TestDatabases.postgres(SCHEMA);
    TestDatabases.reset(ds);
    TestDatabases.insertReady(ds, 2_000);
    TestDatabases.execute(ds, "ANALYZE outbox_message");
    // The join as the index on a large table makes it: a nested loop over the array of ids.
    DataSource nestedLoop =
        TestDatabases.postgres(SCHEMA, "-c enable_hashjoin=off -c enable_mergejoin=off");
    List<ClaimedJob> claimed =
        new ArrayList<>(
            new JdbcOutboxStore(ds, DIALECT).claimBatch(ClaimRequest.of(CLAIMS, LEASE)));
    assertEquals(CLAIMS, claimed.size());
    List<ClaimedJob> descending = new ArrayList<>(claimed);
    Collections.reverse(descending);
    long deadlocksBefore = deadlocks(ds);
    long ascendingPid;
    long descendingPid;
    try (Connection middle = ds.getConnection();
        Connection up = nestedLoop.getConnection();
        Connection down = nestedLoop.getConnection()) {
      middle.setAutoCommit(false);
      lock(middle, claimed.get(CLAIMS / 2).id());
      ascendingPid = pid(up);
      descendingPid = pid(down);
      Future<List<Long>> ascending = renewers.submit(() -> renew(up, claimed));
      Future<List<Long>> descendingRenewal = renewers.submit(() -> renew(down, descending));
      await("both renewals waiting for a row lock")
          .atMost(Duration.ofSeconds(30))
          .until(() -> waiting(ds, ascendingPid) && waiting(ds, descendingPid));
      middle.rollback();

      List<Long> all = claimed.stream().map(ClaimedJob::id).sorted().toList();
      assertEquals(
          all,
          ascending.get(30, TimeUnit.SECONDS).stream().sorted().toList(),
          "the ascending renewal renewed every claim");
      assertEquals(
          all,
          descendingRenewal.get(30, TimeUnit.SECONDS).stream().sorted().toList(),
          "the descending renewal renewed every claim");
    }
    // A backend reports its deadlocks to pg_stat_database at the latest when it exits.
    await("the renewing sessions gone")
        .atMost(Duration.ofSeconds(30))
        .until(() -> !alive(ds, ascendingPid) && !alive(ds, descendingPid));
    assertEquals(deadlocksBefore, deadlocks(ds), "pg_stat_database.deadlocks of this database");
  }

  /** Renews the leases of {@code claims}, in their order, in a transaction of its own. */
  private static List<Long> renew(Connection c, List<ClaimedJob> claims) throws SQLException {
    c.setAutoCommit(false);
    List<Long> ids = claims.stream().map(ClaimedJob::id).toList();
    List<UUID> tokens = claims.stream().map(ClaimedJob::claimToken).toList();
    BoundSql renewal =
        DIALECT.jobs(OutboxTables.DEFAULT).renewLeases(ids, tokens, LEASE.toMillis());
    List<Long> renewed;
    try (PreparedStatement ps = c.prepareStatement(renewal.sql())) {
      DIALECT.binding().bindAll(ps, renewal.params());
      renewed = Rows.list(ps, rs -> rs.getLong(1));
    }
    c.commit();
    return renewed;
  }

  private static void lock(Connection c, long id) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT id FROM outbox_message WHERE id = ? FOR UPDATE")) {
      ps.setLong(1, id);
      ps.executeQuery().close();
    }
  }

  private static long pid(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static boolean waiting(DataSource ds, long pid) {
    return TestDatabases.queryLong(
            ds, "SELECT cardinality(pg_blocking_pids(CAST(? AS INTEGER)))", pid)
        > 0;
  }

  private static boolean alive(DataSource ds, long pid) {
    return TestDatabases.queryLong(
            ds, "SELECT COUNT(*) FROM pg_stat_activity WHERE pid = CAST(? AS INTEGER)", pid)
        > 0;
  }

  private static long deadlocks(DataSource ds) {
    return TestDatabases.queryLong(
        ds, "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()");
  }
}
