package dev.outboxrelay.relay.maintenance;

import static dev.outboxrelay.relay.maintenance.RetentionService.RETENTION_LOCK;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.AttemptRecord;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.JdbcFleetLock;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.relay.maintenance.RetentionService.RetentionPass;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RetentionService} on a real (H2) outbox with its fleet lock: a pass deletes the old sent
 * jobs in batches and counts them, a relay whose peer holds the lease deletes nothing, a peer's
 * tick right after a pass skips, and a pass stops at max-per-pass.
 */
class RetentionServiceIT {
  private static final Duration KEEP = Duration.ofHours(1);
  private final DataSource ds = TestDatabases.h2();
  private JdbcOutboxStore store;
  private JdbcFleetLock locks;

  @BeforeEach
  void setUp() {
    resetAll();
    store = JdbcOutboxStore.create(ds);
    locks = JdbcFleetLock.create(ds);
  }

  @AfterEach
  void resetAll() {
    TestDatabases.reset(ds);
    TestDatabases.execute(ds, "DELETE FROM outbox_lock");
  }

  @Test
  void onePassDeletesTheOldSentJobsInBatchesWhileNoOtherRelayHoldsTheLease() {
    List<Long> sent = sentJobs(7);
    makeOld(sent.subList(0, 5));
    MeterRegistry registryA = new SimpleMeterRegistry();
    MeterRegistry registryB = new SimpleMeterRegistry();
    RetentionSettings settings = RetentionSettings.of(true, KEEP, Duration.ofHours(1), 2, 100);
    RetentionService relayA =
        new RetentionService(store, locks, settings, new RetentionMetrics(registryA), "relay-a");
    RetentionService relayB =
        new RetentionService(store, locks, settings, new RetentionMetrics(registryB), "relay-b");

    assertTrue(
        locks.acquire(RETENTION_LOCK, "relay-b", Duration.ofMinutes(1)), "relay b runs a pass");
    assertEquals(
        Optional.empty(), relayA.retainOnce(), "relay a must not run while b holds the lease");
    assertEquals(Optional.empty(), relayA.runScheduled());
    assertEquals(7, TestDatabases.countMessages(ds), "nothing deleted by relay a");
    assertEquals(0.0, deletedTotal(registryA));
    locks.release(RETENTION_LOCK, "relay-b");

    // The 5 old jobs in batches of 2: 2 + 2 + 1 (fewer than a batch ends the pass).
    assertEquals(Optional.of(new RetentionPass(5, 3, false)), relayA.retainOnce());
    assertEquals(
        sent.subList(5, 7),
        TestDatabases.queryLongs(ds, "SELECT id FROM outbox_message ORDER BY id"));
    assertEquals(
        0,
        TestDatabases.queryLong(
            ds, "SELECT COUNT(*) FROM outbox_attempt WHERE message_id <= ?", sent.get(4)),
        "their attempts went with them");
    assertEquals(5.0, deletedTotal(registryA));
    assertTrue(lastRunAge(registryA) < 5, "last run age " + lastRunAge(registryA));
    assertTrue(
        locks.holder(RETENTION_LOCK).orElseThrow().expired(),
        "the lease is released after the pass");

    assertEquals(
        Optional.empty(), relayB.runScheduled(), "a pass ended moments ago: relay b's tick skips");
    assertTrue(
        lastRunAge(registryB) < 5, "relay b shows the fleet's last pass: " + lastRunAge(registryB));
    assertEquals(
        Optional.of(new RetentionPass(0, 1, false)), relayB.retainOnce(), "nothing old is left");
  }

  @Test
  void aPassStopsAtMaxPerPassAndTheNextGoesOn() {
    List<Long> sent = sentJobs(5);
    makeOld(sent);
    RetentionService relay =
        new RetentionService(
            store,
            locks,
            RetentionSettings.of(true, KEEP, Duration.ofHours(1), 2, 3),
            new RetentionMetrics(new SimpleMeterRegistry()),
            "relay-a");

    assertEquals(
        Optional.of(new RetentionPass(3, 2, true)), relay.retainOnce(), "2 + a last batch of 1");
    assertEquals(2, TestDatabases.countMessages(ds));
    assertEquals(
        Optional.of(new RetentionPass(2, 2, false)),
        relay.retainOnce(),
        "a full batch of 2, then an empty one ends the pass");
    assertEquals(0, TestDatabases.countMessages(ds));
  }

  /** {@code n} jobs delivered ({@code S}, one attempt each), ids ascending. */
  private List<Long> sentJobs(int n) {
    List<Long> ids = TestDatabases.insertReady(ds, n);
    for (ClaimedJob c : store.claimBatch(ClaimRequest.of(n, Duration.ofSeconds(30)))) {
      assertTrue(store.markDelivered(c, AttemptRecord.success(Duration.ofMillis(1), "200")));
    }
    return ids;
  }

  private void makeOld(List<Long> ids) {
    for (long id : ids) {
      TestDatabases.update(
          ds,
          "UPDATE outbox_message SET sent_at = "
              + TestDatabases.secondsAgo(ds, 7200)
              + " WHERE id = ?",
          id);
    }
  }

  private static double deletedTotal(MeterRegistry registry) {
    return registry.get("outbox.retention.deleted").counter().count();
  }

  private static double lastRunAge(MeterRegistry registry) {
    return registry.get("outbox.retention.last.run.age.seconds").gauge().value();
  }
}
