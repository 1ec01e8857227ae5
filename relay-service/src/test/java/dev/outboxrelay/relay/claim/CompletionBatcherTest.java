package dev.outboxrelay.relay.claim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.AttemptRecord;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedMessage;
import dev.outboxrelay.outbox.store.DeliveredJob;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.StoredAttempt;
import dev.outboxrelay.outbox.store.dialect.H2OutboxDialect;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The batched completion: batches form, stale claims stay stale, a failed flush commits nothing. H2. */
class CompletionBatcherTest {
  static final Duration LEASE = Duration.ofSeconds(30);

  JdbcOutboxStore store;
  /** Sizes of the batches the store was asked to complete. */
  final List<Integer> flushes = new CopyOnWriteArrayList<>();
  final AtomicBoolean failFlushes = new AtomicBoolean();
  OutboxStore recording;
  final ExecutorService workers = Executors.newFixedThreadPool(16);

  @BeforeEach
  void setUp() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:completion-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    OutboxSchema.migrate(h2);
    store = new JdbcOutboxStore(h2, new H2OutboxDialect());
    try (Connection c = h2.getConnection(); PreparedStatement ps = c.prepareStatement(
        "INSERT INTO outbox_message (operation_id, destination, payload, content_type) VALUES (?, 'b', '{}', 'application/json')")) {
      for (int i = 0; i < 16; i++) {
        ps.setString(1, "op-" + i);
        ps.executeUpdate();
      }
    }
    // The real store, except that markDeliveredAll is counted and can be made to fail.
    recording = (OutboxStore) Proxy.newProxyInstance(getClass().getClassLoader(),
        new Class<?>[] {OutboxStore.class}, (proxy, method, args) -> {
          if (method.getName().equals("markDeliveredAll")) {
            flushes.add(((List<?>) args[0]).size());
            if (failFlushes.get()) {
              throw new OutboxStoreException("injected: connection reset", null);
            }
          }
          try {
            return method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @AfterEach
  void tearDown() {
    workers.shutdownNow();
  }

  private List<Future<Boolean>> completeConcurrently(CompletionBatcher batcher, List<ClaimedMessage> jobs) {
    List<Future<Boolean>> results = new ArrayList<>();
    for (ClaimedMessage m : jobs) {
      results.add(workers.submit(() -> batcher.markDelivered(m, AttemptRecord.success(Duration.ofMillis(1), "200"))));
    }
    return results;
  }

  @Test
  void concurrentSendsShareFewBatchesAndEachLearnsItsOwnOutcome() throws Exception {
    List<ClaimedMessage> claimed = new ArrayList<>(store.claimBatch(ClaimRequest.of(16, LEASE)));
    ClaimedMessage lost = claimed.remove(15);
    ClaimedMessage stale = new ClaimedMessage(lost.id(), lost.operationId(), lost.destination(),
        lost.orderingKey(), lost.payload(), lost.contentType(), lost.headers(), lost.attempts(),
        UUID.randomUUID(), lost.createdAt(), lost.leaseUntil());
    claimed.add(stale);
    try (CompletionBatcher batcher = new CompletionBatcher(recording, 8, Duration.ofMillis(200), LEASE)) {
      List<Future<Boolean>> results = completeConcurrently(batcher, claimed);
      for (int i = 0; i < 15; i++) {
        assertTrue(results.get(i).get(), "job " + claimed.get(i).id());
      }
      assertFalse(results.get(15).get(), "a stale claim is reported as not completed");
    }
    assertEquals(16, flushes.stream().mapToInt(Integer::intValue).sum());
    assertTrue(flushes.size() < 16, "batched, not one by one: " + flushes);
    assertTrue(flushes.stream().allMatch(n -> n <= 8), "no batch above its size: " + flushes);
    assertEquals(15L, store.countByState().get('S'));
    assertEquals('W', store.findMessage(lost.id()).orElseThrow().state(), "the real owner keeps the job");
    assertEquals(List.of(AttemptOutcome.STALE),
        store.attempts(lost.id()).stream().map(StoredAttempt::outcome).toList());
  }

  @Test
  void aFailedFlushCommitsNothingAndTheRetryCompletesEachJobOnce() throws Exception {
    List<ClaimedMessage> claimed = store.claimBatch(ClaimRequest.of(4, LEASE));
    try (CompletionBatcher batcher = new CompletionBatcher(recording, 64, Duration.ofMillis(20), LEASE)) {
      failFlushes.set(true);
      for (Future<Boolean> f : completeConcurrently(batcher, claimed)) {
        Exception e = assertThrows(Exception.class, f::get);
        assertTrue(e.getCause() instanceof OutboxStoreException, String.valueOf(e.getCause()));
      }
      assertEquals(4L, store.countByState().get('W'), "nothing completed: the jobs stay leased");
      assertTrue(claimed.stream().allMatch(m -> store.attempts(m.id()).isEmpty()), "and no attempt row");

      failFlushes.set(false);
      for (Future<Boolean> f : completeConcurrently(batcher, claimed)) {
        assertTrue(f.get());
      }
      for (Future<Boolean> f : completeConcurrently(batcher, claimed)) {
        assertFalse(f.get(), "a repeated completion finds the claim gone");
      }
    }
    assertEquals(4L, store.countByState().get('S'));
    for (ClaimedMessage m : claimed) {
      assertEquals(List.of(AttemptOutcome.DELIVERED, AttemptOutcome.STALE),
          store.attempts(m.id()).stream().map(StoredAttempt::outcome).toList());
    }
  }

  @Test
  void aBatchHoldingEveryJobInFlightIsFlushedWithoutWaitingOutMaxWait() throws Exception {
    List<ClaimedMessage> claimed = store.claimBatch(ClaimRequest.of(3, LEASE));
    try (CompletionBatcher batcher = new CompletionBatcher(recording, 64, Duration.ofSeconds(20), LEASE)
        .flushWhenAllWaiting(() -> 3)) {
      long t0 = System.nanoTime();
      for (Future<Boolean> f : completeConcurrently(batcher, claimed)) {
        assertTrue(f.get());
      }
      assertTrue(Duration.ofNanos(System.nanoTime() - t0).compareTo(Duration.ofSeconds(10)) < 0,
          "flushed once all 3 jobs in flight waited, not after the 20 s max wait");
    }
    assertEquals(List.of(3), flushes);
  }

  @Test
  void afterCloseAJobIsCompletedOnItsOwn() {
    ClaimedMessage m = store.claimBatch(ClaimRequest.of(1, LEASE)).get(0);
    CompletionBatcher batcher = new CompletionBatcher(recording, 64, Duration.ofMillis(2), LEASE);
    batcher.close();

    assertTrue(batcher.markDelivered(m, AttemptRecord.success(Duration.ofMillis(1), "200")));
    assertEquals(List.of(1), flushes);
    assertEquals(Set.of(), store.markDeliveredAll(List.of(new DeliveredJob(m, AttemptRecord.success(
        Duration.ofMillis(1), "again")))));
  }

  @Test
  void badSettingsNameTheirKey() {
    IllegalArgumentException size = assertThrows(IllegalArgumentException.class,
        () -> new CompletionBatcher(recording, 0, Duration.ofMillis(2), LEASE));
    assertTrue(size.getMessage().contains("outbox.relay.completion-batch-size"), size.getMessage());
    IllegalArgumentException wait = assertThrows(IllegalArgumentException.class,
        () -> new CompletionBatcher(recording, 8, Duration.ofMillis(-1), LEASE));
    assertTrue(wait.getMessage().contains("outbox.relay.completion-max-wait"), wait.getMessage());
  }
}
