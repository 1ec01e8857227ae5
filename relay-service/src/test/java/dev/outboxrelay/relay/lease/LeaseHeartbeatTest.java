package dev.outboxrelay.relay.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.background.Pass;
import dev.outboxrelay.relay.state.StateChangeLog;
import dev.outboxrelay.relay.testing.H2Outbox;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The batched heartbeat: one statement per pass for every claim held; a lost claim is reported
 * once. H2.
 */
class LeaseHeartbeatTest {
  static final Duration LEASE = Duration.ofSeconds(30);

  H2Outbox h2;

  JdbcOutboxStore store;

  JdbcOutboxAdminStore admin;

  /** How many claims each renewLeases call carried. */
  final List<Integer> renewals = new CopyOnWriteArrayList<>();

  OutboxStore counting;

  @BeforeEach
  void setUp() throws Exception {
    h2 = H2Outbox.withReadyJobs("heartbeat", 5);
    store = h2.store();
    admin = h2.admin();
    counting =
        h2.around(
            (method, args, call) -> {
              if (method.equals("renewLeases")) {
                renewals.add(((Map<?, ?>) args[0]).size());
              }
              return call.call();
            });
  }

  @Test
  void onePassRenewsEveryHeldClaimInOneStatementAndReportsALostOneOnce() {
    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(4, Duration.ofSeconds(2)));
    AtomicInteger lost = new AtomicInteger();
    LeaseHeartbeat heartbeat =
        new LeaseHeartbeat(counting, LEASE, null, c -> lost.incrementAndGet());
    List<LeaseHeartbeat.Claim> held =
        claimed.stream().map(m -> heartbeat.hold(m, System.nanoTime())).toList();
    // The fourth claim is lost: its lease expires and the reaper re-offers it.
    store.renewLease(claimed.get(3).id(), claimed.get(3).claimToken(), Duration.ofMillis(1));
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> store.releaseExpiredLeases(5, 10).total() == 1);

    assertEquals(1, heartbeat.runOnce().work(), "one claim found lost");
    assertEquals(List.of(4), renewals, "one statement for the four claims held");
    assertEquals(1, lost.get());
    assertTrue(held.get(3).lost());
    for (int i = 0; i < 3; i++) {
      assertFalse(held.get(i).lost());
      assertTrue(
          held.get(i).ownedFor().compareTo(LEASE.minusSeconds(5)) > 0, "renewed for a whole lease");
      assertTrue(
          admin
              .findJob(claimed.get(i).id())
              .orElseThrow()
              .leaseUntil()
              .isAfter(admin.databaseNow().plus(LEASE.minusSeconds(5))),
          "lease_until extended");
    }

    assertEquals(
        0, heartbeat.runOnce().work(), "a lost claim is not asked about (or counted) again");
    assertEquals(List.of(4, 3), renewals);
    assertEquals(1, lost.get());
  }

  @Test
  void aRecordingClaimThatIsGoneIsLeftToItsOwnTransitionAndAForgottenOneIsNotRenewed() {
    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(2, LEASE));
    AtomicInteger lost = new AtomicInteger();
    LeaseHeartbeat heartbeat =
        new LeaseHeartbeat(counting, LEASE, null, c -> lost.incrementAndGet());
    LeaseHeartbeat.Claim recording = heartbeat.hold(claimed.get(0), System.nanoTime());
    LeaseHeartbeat.Claim finished = heartbeat.hold(claimed.get(1), System.nanoTime());
    recording.recording();
    // Its own completion just committed: the row is S, the heartbeat gets nothing back for it.
    assertTrue(
        store.markDelivered(
            claimed.get(0),
            dev.outboxrelay.outbox.store.AttemptRecord.success(Duration.ofMillis(1), "200")));
    heartbeat.forget(finished);

    assertEquals(0, heartbeat.runOnce().work());
    assertEquals(0, lost.get(), "the recording transition reports its own outcome");
    assertEquals(List.of(1), renewals, "the forgotten claim is not renewed");
    assertEquals(1, heartbeat.held());
  }

  @Test
  void noClaimHeldNoStatement() {
    LeaseHeartbeat heartbeat = new LeaseHeartbeat(counting, LEASE, null, c -> {});
    Pass pass = heartbeat.runOnce();
    assertEquals(0, pass.work());
    assertFalse(pass.answered(), "nothing asked: no evidence that the database is up");
    assertEquals(List.of(), renewals);
    assertEquals(Duration.ofSeconds(10), heartbeat.interval());
  }

  @Test
  void aFailedRenewalIsReportedToTheSourceStateAndTheNextPassRecovers() {
    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(1, LEASE));
    AtomicInteger failing = new AtomicInteger(1);
    OutboxStore flaky =
        h2.around(
            (method, args, call) -> {
              if (method.equals("renewLeases") && failing.getAndDecrement() > 0) {
                throw new IllegalStateException("connection refused");
              }
              return call.call();
            });
    List<String> lines = new CopyOnWriteArrayList<>();
    StateChangeLog database =
        new StateChangeLog(
            "source 'test' database",
            (level, line) -> lines.add(line),
            Clock.systemUTC(),
            Duration.ofMinutes(1),
            1);
    // A short lease: passes every 100 ms, so the runner's retry comes quickly too.
    LeaseHeartbeat heartbeat =
        new LeaseHeartbeat(flaky, Duration.ofMillis(300), null, c -> {}).reportingTo(database);
    heartbeat.hold(claimed.get(0), System.nanoTime());
    heartbeat.start();
    try {
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> heartbeat.runner().passes() >= 2 && database.up());
    } finally {
      heartbeat.close();
    }
    assertEquals(1, heartbeat.runner().failures());
    assertEquals(2, lines.size(), "one line DOWN, one line UP: " + lines);
    assertTrue(
        lines.get(0).contains("DOWN: renewing leases failed: connection refused"), lines.get(0));
    assertFalse(heartbeat.runner().running());
  }
}
