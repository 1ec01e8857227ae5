package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.store.AttemptRecord;
import dev.outboxrelay.outbox.store.ClaimedMessage;
import dev.outboxrelay.outbox.store.DeliveredJob;
import dev.outboxrelay.outbox.store.OutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntSupplier;

/**
 * Records successful sends as delivered in batches: workers hand their job in and wait, one
 * flusher thread completes what has gathered with one {@link OutboxStore#markDeliveredAll} (one
 * transaction, one token-checked statement) once {@code batchSize} jobs wait, or every job in
 * flight waits ({@link #flushWhenAllWaiting}: no other could join the batch), or the first of them
 * has waited {@code maxWait}. A worker waits for its own batch, so its heartbeat keeps the lease
 * until the outcome is committed, and the claim loop counts it busy until then.
 *
 * <p>Failure never loses or double-completes a job: a flush that fails committed nothing, and
 * every worker of that batch gets the exception and retries as it would a single completion (see
 * {@link Deliverer}); a job whose completion never gets through stays leased and is re-offered
 * after its lease expires (the sink deduplicates by operation ID). A flush that did commit but
 * whose answer was lost makes the retry find the token gone: counted stale, changed nothing.
 */
public final class CompletionBatcher implements AutoCloseable {
  /** Default of {@code outbox.relay.completion-batch-size}. */
  public static final int DEFAULT_BATCH_SIZE = 64;
  /** Default of {@code outbox.relay.completion-max-wait}. */
  public static final Duration DEFAULT_MAX_WAIT = Duration.ofMillis(2);

  private record Pending(DeliveredJob job, CompletableFuture<Boolean> done) {}

  private final OutboxStore store;
  private final int batchSize;
  private final long maxWaitNanos;
  /** How long a worker waits for its batch before it treats the completion as failed. */
  private final Duration resultTimeout;
  private final Object lock = new Object();
  private final List<Pending> pending = new ArrayList<>();
  private long firstPendingAt;
  private boolean closed;
  private final Thread flusher;
  /** Jobs in flight (sending or waiting here); none known: never flush before maxWait. */
  private volatile IntSupplier inFlight = () -> Integer.MAX_VALUE;

  /**
   * @param resultTimeout how long a worker waits for its batch's outcome (the lease: after that
   *     the claim is lost anyway)
   */
  public CompletionBatcher(OutboxStore store, int batchSize, Duration maxWait, Duration resultTimeout) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("outbox.relay.completion-batch-size must be at least 1, was " + batchSize);
    }
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("outbox.relay.completion-max-wait must not be negative, was " + maxWait);
    }
    this.store = store;
    this.batchSize = batchSize;
    this.maxWaitNanos = maxWait.toNanos();
    this.resultTimeout = resultTimeout;
    this.flusher = new Thread(this::run, "outbox-completion-flusher");
    this.flusher.setDaemon(true);
    this.flusher.start();
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

  /** The batch is complete: full, or nothing else in flight could join it. Holding the lock. */
  private boolean batchReady() {
    return pending.size() >= batchSize || pending.size() >= inFlight.getAsInt();
  }

  /**
   * Records {@code m} as delivered with the next batch and waits for that batch. Returns true when
   * it completed, false when the claim was lost (recorded as stale, nothing changed). Throws
   * {@link OutboxStoreException} when the batch failed (nothing of it committed) or gave no answer
   * within the result timeout. After {@link #close()} it completes the job on its own.
   */
  public boolean markDelivered(ClaimedMessage m, AttemptRecord attempt) {
    DeliveredJob job = new DeliveredJob(m, attempt);
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    synchronized (lock) {
      if (closed) {
        return store.markDeliveredAll(List.of(job)).contains(m.id());
      }
      if (pending.isEmpty()) {
        firstPendingAt = System.nanoTime();
      }
      pending.add(new Pending(job, done));
      if (pending.size() == 1 || batchReady()) {
        lock.notifyAll();
      }
    }
    return await(m, done);
  }

  /**
   * Waits without giving up on an interrupt (shutdown): the batch may commit this job, so the
   * worker must learn the outcome; the interrupt is kept for the caller.
   */
  private boolean await(ClaimedMessage m, CompletableFuture<Boolean> done) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + resultTimeout.toNanos();
    try {
      while (true) {
        try {
          return done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw e.getCause() instanceof RuntimeException r ? r
              : new OutboxStoreException("completion of message " + m.id() + " failed", e.getCause());
        } catch (TimeoutException e) {
          throw new OutboxStoreException("completion batch of message " + m.id() + " gave no answer within "
              + resultTimeout, e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void run() {
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
      flush(batch);
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
      List<Pending> batch = new ArrayList<>(pending.subList(0, n));
      pending.subList(0, n).clear();
      firstPendingAt = System.nanoTime();
      return batch;
    }
  }

  private void flush(List<Pending> batch) {
    try {
      Set<Long> completed = store.markDeliveredAll(batch.stream().map(Pending::job).toList());
      for (Pending p : batch) {
        p.done().complete(completed.contains(p.job().message().id()));
      }
    } catch (RuntimeException e) {
      for (Pending p : batch) {
        p.done().completeExceptionally(e);
      }
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
