package dev.outboxrelay.relay.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.StoredAttempt;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.store.dialect.H2Dialect;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reaper: an expired lease is an attempt, and is followed by the back-off of a failed one. H2.
 */
class LeaseReaperTest {
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration BACK_OFF = Duration.ofHours(1);

  JdbcDataSource h2;
  JdbcOutboxStore store;
  JdbcOutboxAdminStore admin;

  @BeforeEach
  void setUp() throws Exception {
    h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:reaper-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    OutboxSchema.migrate(h2);
    store = new JdbcOutboxStore(h2, new H2Dialect());
    admin = new JdbcOutboxAdminStore(h2, new H2Dialect());
    execute(
        "INSERT INTO outbox_message (operation_id, destination, payload, content_type)"
            + " VALUES ('op-1', 'b', '{}', 'application/json')");
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = h2.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.executeUpdate();
    }
  }

  /**
   * Claims the job with a lease that has expired by the time the reaper's pass runs, then reaps it.
   */
  private void claimAndLetExpire(LeaseReaper reaper) {
    assertEquals(1, store.claimBatch(ClaimRequest.of(1, Duration.ofMillis(1))).size());
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> reaper.runOnce().work() == 1);
  }

  /**
   * Guards against a job that expired under load being offered again at once: in a chaos run on a
   * loaded host (2 s lease) four jobs of 50,000 were re-claimed straight after each expiry, expired
   * again, and went dead after ten expired leases within seconds. Now each expiry but the last
   * waits the back-off of the attempt that expired, and the last one (max attempts) is dead.
   */
  @Test
  void anExpiredLeaseIsDueAgainOnlyAfterTheBackOffAndTheLastOneIsDead() throws Exception {
    List<Integer> delaysAskedFor = new CopyOnWriteArrayList<>();
    LeaseReaper reaper =
        new LeaseReaper(
            store,
            new RelayMetrics(new SimpleMeterRegistry()),
            3,
            10,
            attempt -> {
              delaysAskedFor.add(attempt);
              return BACK_OFF;
            });
    claimAndLetExpire(reaper);
    StoredJob reaped = admin.findByOperationId("op-1").orElseThrow();
    assertEquals('R', reaped.state());
    assertEquals(1, reaped.attempts(), "an expired lease counts as an attempt");
    assertTrue(
        reaped.deliverAfter().isAfter(Instant.now().plus(BACK_OFF).minus(Duration.ofMinutes(5))),
        "due after the back-off of attempt 1: " + reaped.deliverAfter());
    assertEquals(
        List.of(), store.claimBatch(ClaimRequest.of(1, LEASE)), "not offered again before then");

    execute("UPDATE outbox_message SET deliver_after = CURRENT_TIMESTAMP");
    claimAndLetExpire(reaper);
    execute("UPDATE outbox_message SET deliver_after = CURRENT_TIMESTAMP");
    claimAndLetExpire(reaper);
    StoredJob dead = admin.findByOperationId("op-1").orElseThrow();
    assertEquals('D', dead.state(), "the third expiry of three attempts is the last");
    assertEquals(List.of(1, 2), delaysAskedFor, "a back-off after every expiry but the last");
    assertEquals(
        List.of(
            AttemptOutcome.LEASE_EXPIRED,
            AttemptOutcome.LEASE_EXPIRED,
            AttemptOutcome.LEASE_EXPIRED),
        admin.attempts(dead.id()).stream().map(StoredAttempt::outcome).toList());
  }
}
