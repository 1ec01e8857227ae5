package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.AttemptRecord;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.DeliveredJob;
import dev.outboxrelay.outbox.store.DeliveryBatch;
import dev.outboxrelay.outbox.store.HandOver;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.state.StateChangeLog;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import org.jboss.logging.Logger;

/**
 * Records successful sends as delivered in batches: a worker hands its job in ({@link #submit}) and
 * goes on to its next job; one flusher thread completes what has gathered with one {@link
 * OutboxStore#markDeliveredAll} (one transaction, one token-checked statement) once {@code
 * batchSize} jobs wait, or every job in flight waits ({@link #flushWhenAllWaiting}: no other could
 * join the batch), or the first of them has waited {@code maxWait}, and then tells each job's
 * callback its {@link Completion}. Until then the job stays held (its lease renewed by the
 * heartbeat).
 *
 * <p>Failure never loses or double-completes a job: a flush that fails is retried, with growing
 * pauses, for up to {@code resultTimeout} after the job was handed in; a retry after a flush that
 * did commit but whose answer was lost reads its own attempt back and reports the job completed,
 * not stale ({@link OutboxStore#markDelivered}). A job whose completion never got an answer is
 * reported {@link Completion#UNKNOWN}: it is either delivered or still leased and re-offered once
 * its lease expires (the sink deduplicates by operation ID). {@link Completion#STALE} means exactly
 * that the token check changed no row.
 *
 * <p>Key-affine hand-over ({@link #handingOverTo}): a batch that completes the last job this relay
 * holds of an ordering key claims, in the same transaction, the key's run (its next ready jobs, up
 * to the loop's key run length) for this relay, within room the claim loop reserved for it before
 * the transaction ({@link ClaimLoop#reserveHandOver}), and hands it to the loop's queue with the
 * heartbeat holding it; a busy key then waits for its sink, not for the next claim, and its run
 * shares one completion batch (docs/design.md "Ordering keys").
 */
public final class CompletionBatcher implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(CompletionBatcher.class);

  private static final Duration RETRY_MIN = Duration.ofMillis(100);
  private static final Duration RETRY_MAX = Duration.ofSeconds(2);

  /** What became of a job handed in. */
  public enum Completion {
    /** {@code W → S} committed (by this batch, or by an earlier try whose answer was lost). */
    COMPLETED,
    /** The token check changed no row: the claim was lost before; recorded as a STALE attempt. */
    STALE,
    /**
     * No flush got an answer within the result timeout: delivered, or re-offered after its lease.
     */
    UNKNOWN
  }

  /** A job handed in; {@code unanswered}: a flush of it failed, so it may have committed. */
  private record Pending(
      DeliveredJob job, Consumer<Completion> done, long deadline, boolean unanswered) {
    Pending failed() {
      return new Pending(job, done, deadline, true);
    }
  }

  private final OutboxStore store;
  private final int batchSize;
  private final long maxWaitNanos;

  /** How long a job's completion is retried before it is reported UNKNOWN. */
  private final Duration resultTimeout;

  private final Object lock = new Object();
  private final Deque<Pending> pending = new ArrayDeque<>();
  private long firstPendingAt;
  private boolean closed;
  private final Thread flusher;

  /** Jobs in flight (sending or waiting here); none known: never flush before maxWait. */
  private volatile IntSupplier inFlight = () -> Integer.MAX_VALUE;

  private volatile StateChangeLog database =
      StateChangeLog.logging("the completion flusher's database", LOG);

  /** Where handed-over claims go, and their lease; null: no hand-over. */
  private volatile ClaimLoop handOverTo;

  private volatile Duration handOverLease;

  /**
   * @param resultTimeout how long a job's completion is retried after a failed flush (the lease:
   *     after that the claim is lost anyway)
   */
  public CompletionBatcher(
      OutboxStore store, int batchSize, Duration maxWait, Duration resultTimeout) {
    if (batchSize < 1) {
      throw new IllegalArgumentException(
          "outbox.relay.completion-batch-size must be at least 1, was " + batchSize);
    }
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException(
          "outbox.relay.completion-max-wait must not be negative, was " + maxWait);
    }
    this.store = store;
    this.batchSize = batchSize;
    this.maxWaitNanos = maxWait.toNanos();
    this.resultTimeout = resultTimeout;
    this.flusher = new Thread(this::run, "outbox-completion-flusher");
    this.flusher.setDaemon(true);
    this.flusher.start();
  }

  /** Reports flush errors and successes to {@code database} (its source's state). */
  public CompletionBatcher reportingTo(StateChangeLog database) {
    this.database = database;
    return this;
  }

  /**
   * Flushes as soon as the waiting jobs are all of {@code inFlight} (the claim loop's jobs in
   * flight, these included): a relay whose every worker waits here has nothing else to add, and a
   * lone job at low load does not wait out maxWait.
   */
  public CompletionBatcher flushWhenAllWaiting(IntSupplier inFlight) {
    this.inFlight = inFlight;
    return this;
  }

  /**
   * Hands each key's next ready job, claimed with the completion that freed it (leased for {@code
   * lease}), to {@code loop} within the room it reserves ({@link ClaimLoop#reserve}, {@link
   * ClaimLoop#offer}); call before the first job is handed in.
   */
  public CompletionBatcher handingOverTo(ClaimLoop loop, Duration lease) {
    this.handOverLease = lease;
    this.handOverTo = loop;
    return this;
  }

  /**
   * Completes {@code jobs}, claiming for the claim loop, within room it reserved for them, the runs
   * of the keys whose last job this relay holds is among them (at most the loop's key run length
   * per key; none when it has no room): a key of which the loop still holds later jobs goes on with
   * those. Returns the ids completed.
   */
  private Set<Long> complete(List<DeliveredJob> jobs) {
    ClaimLoop loop = handOverTo;
    Set<String> keys = loop == null ? Set.of() : keysToHandOver(loop, jobs);
    int reserved = keys.isEmpty() ? 0 : loop.reserveHandOver(keys.size() * loop.keyRunLength());
    if (reserved == 0) {
      return store.markDeliveredAll(jobs);
    }
    // No later than the claim statement's start: the loop's own idea of the lease stays on the safe
    // side.
    long started = System.nanoTime();
    DeliveryBatch done;
    try {
      done =
          store.markDeliveredAll(
              jobs, new HandOver(ClaimRequest.of(reserved, handOverLease), keys));
    } catch (RuntimeException e) {
      loop.unreserve(reserved);
      throw e;
    }
    loop.offer(done.handedOver(), started, reserved);
    return done.completed();
  }

  /** The keys of {@code jobs} of which {@code loop} holds no job but these. */
  private static Set<String> keysToHandOver(ClaimLoop loop, List<DeliveredJob> jobs) {
    Map<String, Integer> inBatch = new HashMap<>();
    for (DeliveredJob j : jobs) {
      if (j.message().orderingKey() != null) {
        inBatch.merge(j.message().orderingKey(), 1, Integer::sum);
      }
    }
    Set<String> keys = new HashSet<>();
    inBatch.forEach(
        (key, n) -> {
          if (loop.heldOfKey(key) <= n) {
            keys.add(key);
          }
        });
    return keys;
  }

  /** The batch is complete: full, or nothing else in flight could join it. Holding the lock. */
  private boolean batchReady() {
    return pending.size() >= batchSize || pending.size() >= inFlight.getAsInt();
  }

  /** Jobs handed in and not yet answered. */
  public int pending() {
    synchronized (lock) {
      return pending.size();
    }
  }

  /**
   * Records {@code m} as delivered with a coming batch and returns at once; {@code done} is called
   * once, from the flusher thread, with the outcome. After {@link #close()} the job is completed on
   * its own, in the caller's thread.
   */
  public void submit(ClaimedJob m, AttemptRecord attempt, Consumer<Completion> done) {
    DeliveredJob job = new DeliveredJob(m, attempt);
    synchronized (lock) {
      if (!closed) {
        if (pending.isEmpty()) {
          firstPendingAt = System.nanoTime();
        }
        pending.add(new Pending(job, done, System.nanoTime() + resultTimeout.toNanos(), false));
        if (pending.size() == 1 || batchReady()) {
          lock.notifyAll();
        }
        return;
      }
    }
    Completion c;
    try {
      c =
          store.markDeliveredAll(List.of(job)).contains(m.id())
              ? Completion.COMPLETED
              : Completion.STALE;
    } catch (RuntimeException e) {
      LOG.errorf(
          "message_id=%d: recording the delivery failed after shutdown began (%s); the outcome"
              + " is unknown until read back: delivered, or re-offered when its lease expires",
          m.id(), e.getMessage());
      c = Completion.UNKNOWN;
    }
    done.accept(c);
  }

  /**
   * {@link #submit} and wait: true when completed, false when stale; throws {@link
   * OutboxStoreException} when the outcome stayed unknown.
   */
  public boolean markDelivered(ClaimedJob m, AttemptRecord attempt) {
    CompletableFuture<Completion> done = new CompletableFuture<>();
    submit(m, attempt, done::complete);
    Completion c = done.join();
    if (c == Completion.UNKNOWN) {
      throw new OutboxStoreException(
          "completion of message " + m.id() + " gave no answer within " + resultTimeout, null);
    }
    return c == Completion.COMPLETED;
  }

  private void run() {
    Duration pause = RETRY_MIN;
    while (true) {
      List<Pending> batch;
      try {
        batch = nextBatch();
      } catch (InterruptedException e) {
        return;
      }
      if (batch == null) {
        return;
      }
      if (flush(batch)) {
        pause = RETRY_MIN;
      } else {
        try {
          Thread.sleep(pause.toMillis());
        } catch (InterruptedException e) {
          // close(): the retries go on without pauses until the jobs are answered or time out.
        }
        pause = Backoff.doubled(pause, RETRY_MAX);
      }
    }
  }

  /** Waits until a batch is full or its first job waited maxWait; null once closed and empty. */
  private List<Pending> nextBatch() throws InterruptedException {
    synchronized (lock) {
      while (pending.isEmpty()) {
        if (closed) {
          return null;
        }
        lock.wait();
      }
      while (!batchReady() && !closed) {
        long left = firstPendingAt + maxWaitNanos - System.nanoTime();
        if (left <= 0) {
          break;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      int n = Math.min(batchSize, pending.size());
      List<Pending> batch = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        batch.add(pending.poll());
      }
      firstPendingAt = System.nanoTime();
      return batch;
    }
  }

  /**
   * Completes one batch; on a failure the jobs go back to the head of the queue to be retried
   * (those past their deadline are answered UNKNOWN). Returns false when it failed.
   */
  private boolean flush(List<Pending> batch) {
    StateChangeLog db = database;
    Instant callStarted = db.now();
    Set<Long> completed;
    try {
      List<ClaimedJob> unanswered =
          batch.stream().filter(Pending::unanswered).map(p -> p.job().message()).toList();
      if (!unanswered.isEmpty()) {
        // A failed flush may have committed before its answer was lost: read back first, so a
        // delivery this relay did record is not run again and called stale.
        Set<Long> committed = store.recordedUnder(unanswered, AttemptOutcome.DELIVERED);
        List<Pending> rest = new ArrayList<>();
        for (Pending p : batch) {
          if (committed.contains(p.job().message().id())) {
            answer(p, Completion.COMPLETED);
          } else {
            rest.add(p);
          }
        }
        batch = rest;
      }
      completed = complete(batch.stream().map(Pending::job).toList());
    } catch (RuntimeException e) {
      db.failure("recording deliveries failed: " + StateChangeLog.describe(e));
      long now = System.nanoTime();
      List<Pending> retry = new ArrayList<>();
      for (Pending p : batch) {
        if (now - p.deadline() >= 0) {
          ClaimedJob m = p.job().message();
          LOG.errorf(
              "message_id=%d operation_id=%s token=%s: recording the delivery got no answer for %s;"
                  + " the outcome is unknown: delivered, or re-offered when its lease expires (the sink"
                  + " deduplicates by operation ID): %s",
              m.id(), m.operationId(), m.claimToken(), resultTimeout, e.getMessage());
          answer(p, Completion.UNKNOWN);
        } else {
          retry.add(p.failed());
        }
      }
      synchronized (lock) {
        for (int i = retry.size() - 1; i >= 0; i--) {
          pending.addFirst(retry.get(i));
        }
        if (!retry.isEmpty()) {
          firstPendingAt = System.nanoTime() - maxWaitNanos;
        }
      }
      return false;
    }
    db.success(callStarted);
    for (Pending p : batch) {
      answer(
          p, completed.contains(p.job().message().id()) ? Completion.COMPLETED : Completion.STALE);
    }
    return true;
  }

  private static void answer(Pending p, Completion c) {
    try {
      p.done().accept(c);
    } catch (RuntimeException e) {
      LOG.errorf(e, "message_id=%d: handling the completion failed", p.job().message().id());
    }
  }

  /** Flushes what waits, then stops the flusher; later completions run one by one. */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
    try {
      flusher.join(resultTimeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
