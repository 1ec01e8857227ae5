package dev.outboxrelay.relay.claim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.AttemptRecord;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.DeliveredJob;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.StoredAttempt;
import dev.outboxrelay.relay.claim.CompletionBatcher.Completion;
import dev.outboxrelay.relay.testing.H2Outbox;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The batched completion: batches form, stale claims stay stale, a failed flush commits nothing.
 * H2.
 */
class CompletionBatcherTest {
  static final Duration LEASE = Duration.ofSeconds(30);

  JdbcOutboxStore store;

  JdbcOutboxAdminStore admin;

  /** Sizes of the batches the store was asked to complete. */
  final List<Integer> flushes = new CopyOnWriteArrayList<>();

  final AtomicBoolean failFlushes = new AtomicBoolean();

  /** The next flush commits, then its answer is lost (a connection reset after the commit). */
  final AtomicBoolean loseNextAnswer = new AtomicBoolean();

  /** Flushes wait for this latch (a relay frozen while its completion batch is in flight). */
  volatile CountDownLatch frozen = new CountDownLatch(0);

  OutboxStore recording;
  final ExecutorService workers = Executors.newFixedThreadPool(16);

  @BeforeEach
  void setUp() throws Exception {
    H2Outbox h2 = H2Outbox.withReadyJobs("completion", 16);
    store = h2.store();
    admin = h2.admin();
    // The real store, except that markDeliveredAll is counted and can be made to fail.
    recording =
        h2.around(
            (method, args, call) -> {
              if (!method.equals("markDeliveredAll")) {
                return call.call();
              }
              flushes.add(((List<?>) args[0]).size());
              if (failFlushes.get()) {
                throw new OutboxStoreException("injected: connection reset", null);
              }
              frozen.await();
              Object result = call.call();
              if (loseNextAnswer.getAndSet(false)) {
                throw new OutboxStoreException("injected: connection reset after the commit", null);
              }
              return result;
            });
  }

  @AfterEach
  void tearDown() {
    workers.shutdownNow();
  }

  private List<Future<Boolean>> completeConcurrently(
      CompletionBatcher batcher, List<ClaimedJob> jobs) {
    List<Future<Boolean>> results = new ArrayList<>();
    for (ClaimedJob m : jobs) {
      results.add(
          workers.submit(
              () -> batcher.markDelivered(m, AttemptRecord.success(Duration.ofMillis(1), "200"))));
    }
    return results;
  }

  @Test
  void concurrentSendsShareFewBatchesAndEachLearnsItsOwnOutcome() throws Exception {
    List<ClaimedJob> claimed = new ArrayList<>(store.claimBatch(ClaimRequest.of(16, LEASE)));
    ClaimedJob lost = claimed.remove(15);
    ClaimedJob stale =
        new ClaimedJob(
            lost.id(),
            lost.operationId(),
            lost.destination(),
            lost.orderingKey(),
            lost.payload(),
            lost.contentType(),
            lost.headers(),
            lost.attempts(),
            UUID.randomUUID(),
            lost.createdAt(),
            lost.leaseUntil());
    claimed.add(stale);
    try (CompletionBatcher batcher =
        new CompletionBatcher(recording, 8, Duration.ofMillis(200), LEASE)) {
      List<Future<Boolean>> results = completeConcurrently(batcher, claimed);
      for (int i = 0; i < 15; i++) {
        assertTrue(results.get(i).get(), "job " + claimed.get(i).id());
      }
      assertFalse(results.get(15).get(), "a stale claim is reported as not completed");
    }
    assertEquals(16, flushes.stream().mapToInt(Integer::intValue).sum());
    assertTrue(flushes.size() < 16, "batched, not one by one: " + flushes);
    assertTrue(flushes.stream().allMatch(n -> n <= 8), "no batch above its size: " + flushes);
    assertEquals(15L, admin.countByState().get('S'));
    assertEquals(
        'W', admin.findJob(lost.id()).orElseThrow().state(), "the real owner keeps the job");
    assertEquals(
        List.of(AttemptOutcome.STALE),
        admin.attempts(lost.id()).stream().map(StoredAttempt::outcome).toList());
  }

  private static AttemptRecord ok() {
    return AttemptRecord.success(Duration.ofMillis(1), "200");
  }

  @Test
  void aWorkerHandsItsJobInWithoutWaitingAndAFailedFlushIsRetriedUntilItCompletesEachJobOnce()
      throws Exception {
    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(4, LEASE));
    Map<Long, Completion> answers = new ConcurrentHashMap<>();
    try (CompletionBatcher batcher =
        new CompletionBatcher(recording, 64, Duration.ofMillis(20), LEASE)) {
      failFlushes.set(true);
      for (ClaimedJob m : claimed) {
        batcher.submit(m, ok(), c -> answers.put(m.id(), c));
      }
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> flushes.size() >= 2);
      assertTrue(answers.isEmpty(), "no answer while every flush fails: " + answers);
      assertEquals(4L, admin.countByState().get('W'), "nothing completed: the jobs stay leased");
      assertTrue(
          claimed.stream().allMatch(m -> admin.attempts(m.id()).isEmpty()), "and no attempt row");

      failFlushes.set(false);
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answers.size() == 4);
      assertTrue(
          answers.values().stream().allMatch(c -> c == Completion.COMPLETED), answers.toString());
      for (ClaimedJob m : claimed) {
        assertFalse(batcher.markDelivered(m, ok()), "a repeated completion finds the claim gone");
      }
      assertEquals(4L, admin.countByState().get('S'));
    }
    assertEquals(4L, admin.countByState().get('S'));
    for (ClaimedJob m : claimed) {
      assertEquals(
          List.of(AttemptOutcome.DELIVERED, AttemptOutcome.STALE),
          admin.attempts(m.id()).stream().map(StoredAttempt::outcome).toList());
    }
  }

  @Test
  void aBatchThatCommittedButLostItsAnswerIsReadBackAsCompletedNotStale() throws Exception {
    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(3, LEASE));
    Map<Long, Completion> answers = new ConcurrentHashMap<>();
    try (CompletionBatcher batcher =
        new CompletionBatcher(recording, 64, Duration.ofMillis(20), LEASE)) {
      loseNextAnswer.set(true);
      for (ClaimedJob m : claimed) {
        batcher.submit(m, ok(), c -> answers.put(m.id(), c));
      }
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answers.size() == 3);
    }
    assertTrue(flushes.size() >= 2, "the lost answer made the batch run again: " + flushes);
    assertTrue(
        answers.values().stream().allMatch(c -> c == Completion.COMPLETED),
        "the retry found its own committed attempt: completed, not stale: " + answers);
    for (ClaimedJob m : claimed) {
      assertEquals(
          List.of(AttemptOutcome.DELIVERED),
          admin.attempts(m.id()).stream().map(StoredAttempt::outcome).toList(),
          "one DELIVERED attempt under the claim's token, no STALE row for the retry");
    }
  }

  @Test
  void
      frozenPastTheLeaseWhileTheBatchWasInFlightTheCompletionIsStaleOnlyBecauseTheTokenCheckChangedNoRow()
          throws Exception {
    ClaimedJob mine = store.claimBatch(ClaimRequest.of(1, Duration.ofMillis(50))).get(0);
    ClaimedJob other = store.claimBatch(ClaimRequest.of(1, LEASE)).get(0);
    CompletableFuture<Completion> mineDone = new CompletableFuture<>();
    CompletableFuture<Completion> otherDone = new CompletableFuture<>();
    frozen = new CountDownLatch(1);
    try (CompletionBatcher batcher =
        new CompletionBatcher(recording, 64, Duration.ofMillis(20), LEASE)) {
      batcher.submit(mine, ok(), mineDone::complete);
      batcher.submit(other, ok(), otherDone::complete);
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> flushes.size() == 1);
      // While the batch is frozen, mine's lease expires and another relay claims the job again.
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> store.releaseExpiredLeases(5, 10).total() == 1);
      ClaimedJob again = store.claimBatch(ClaimRequest.of(1, LEASE)).get(0);
      assertEquals(mine.id(), again.id());
      frozen.countDown();
      assertEquals(
          Completion.STALE, mineDone.get(10, TimeUnit.SECONDS), "its token check changed no row");
      assertEquals(Completion.COMPLETED, otherDone.get(10, TimeUnit.SECONDS));
      assertEquals('W', admin.findJob(mine.id()).orElseThrow().state(), "the new owner keeps it");
      assertEquals(
          List.of(AttemptOutcome.LEASE_EXPIRED, AttemptOutcome.STALE),
          admin.attempts(mine.id()).stream().map(StoredAttempt::outcome).toList());
    }
  }

  @Test
  void aCompletionThatNeverGetsAnAnswerIsReportedUnknownNotStale() throws Exception {
    ClaimedJob m = store.claimBatch(ClaimRequest.of(1, LEASE)).get(0);
    CompletableFuture<Completion> done = new CompletableFuture<>();
    failFlushes.set(true);
    try (CompletionBatcher batcher =
        new CompletionBatcher(recording, 64, Duration.ofMillis(2), Duration.ofMillis(300))) {
      batcher.submit(m, ok(), done::complete);
      assertEquals(Completion.UNKNOWN, done.get(10, TimeUnit.SECONDS));
    }
    assertEquals(
        'W', admin.findJob(m.id()).orElseThrow().state(), "nothing committed: still leased");
    assertTrue(admin.attempts(m.id()).isEmpty(), "no STALE attempt: nothing was found lost");
  }

  @Test
  void aBatchHoldingEveryJobInFlightIsFlushedWithoutWaitingOutMaxWait() throws Exception {
    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(3, LEASE));
    try (CompletionBatcher batcher =
        new CompletionBatcher(recording, 64, Duration.ofSeconds(20), LEASE)
            .flushWhenAllWaiting(() -> 3)) {
      long t0 = System.nanoTime();
      for (Future<Boolean> f : completeConcurrently(batcher, claimed)) {
        assertTrue(f.get());
      }
      assertTrue(
          Duration.ofNanos(System.nanoTime() - t0).compareTo(Duration.ofSeconds(10)) < 0,
          "flushed once all 3 jobs in flight waited, not after the 20 s max wait");
    }
    assertEquals(List.of(3), flushes);
  }

  @Test
  void afterCloseAJobIsCompletedOnItsOwn() {
    ClaimedJob m = store.claimBatch(ClaimRequest.of(1, LEASE)).get(0);
    CompletionBatcher batcher = new CompletionBatcher(recording, 64, Duration.ofMillis(2), LEASE);
    batcher.close();

    assertTrue(batcher.markDelivered(m, AttemptRecord.success(Duration.ofMillis(1), "200")));
    assertEquals(List.of(1), flushes);
    assertEquals(
        Set.of(),
        store.markDeliveredAll(
            List.of(new DeliveredJob(m, AttemptRecord.success(Duration.ofMillis(1), "again")))));
  }

  @Test
  void badSettingsNameTheirKey() {
    IllegalArgumentException size =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CompletionBatcher(recording, 0, Duration.ofMillis(2), LEASE));
    assertTrue(size.getMessage().contains("outbox.relay.completion-batch-size"), size.getMessage());
    IllegalArgumentException wait =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CompletionBatcher(recording, 8, Duration.ofMillis(-1), LEASE));
    assertTrue(wait.getMessage().contains("outbox.relay.completion-max-wait"), wait.getMessage());
  }
}
