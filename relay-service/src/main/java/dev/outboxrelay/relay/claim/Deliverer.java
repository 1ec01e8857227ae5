package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.AttemptRecord;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.lease.LeaseHeartbeat;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.MessageSink;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.sink.SinkResult;
import dev.outboxrelay.relay.state.StateChangeLog;
import dev.outboxrelay.relay.tracing.DeliveryTracing;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Delivers one claimed job and records the outcome: load a by-reference body ({@link
 * PayloadResolver}), send (the source's {@link LeaseHeartbeat} renewing the claim), then one
 * token-checked transition. The send holds no thread: the sink answers a stage, and its answer is
 * recorded on a worker. A success is handed to the {@link CompletionBatcher} and the worker goes on
 * at once; the claim is finished when the batch answers. A transition that changes no row is
 * counted as a stale completion and changes nothing. A recording that fails on a database error is
 * retried until the lease would have expired; after that its outcome is unknown: the reaper
 * re-offers the job if it was not recorded, and the sink deduplicates.
 *
 * <p>A claim is sent only while this relay surely still owns it for at least a third of the lease
 * (by its own clock, from the last claim or renewal that answered): one whose heartbeat found it
 * lost, or that waited too long, is given back unsent.
 */
public class Deliverer {
  private static final Logger LOG = Logger.getLogger(Deliverer.class);
  private static final Duration RECORD_RETRY_MIN = Duration.ofMillis(100);
  private static final Duration RECORD_RETRY_MAX = Duration.ofSeconds(2);

  private final OutboxStore store;
  private final SinkRegistry sinks;
  private final Backoff backoff;
  private final RelayMetrics metrics;
  private final int maxAttempts;
  private final Duration lease;
  private final Supplier<Duration> clockSkew;
  private final PayloadResolver payloads;
  private DeliveryTracing tracing = DeliveryTracing.OFF;

  /** The relay instance named on every attempt this records; null: unnamed. */
  private String relayInstance;

  private CompletionBatcher completions;

  /** Where recording errors go. */
  private volatile StateChangeLog database =
      StateChangeLog.logging("the deliverer's database", LOG);

  /**
   * @param clockSkew database clock minus this process's clock, for commit-to-sent latency
   */
  public Deliverer(
      OutboxStore store,
      SinkRegistry sinks,
      Backoff backoff,
      RelayMetrics metrics,
      int maxAttempts,
      Duration lease,
      Supplier<Duration> clockSkew) {
    this.store = store;
    this.sinks = sinks;
    this.backoff = backoff;
    this.metrics = metrics;
    this.maxAttempts = maxAttempts;
    this.lease = lease;
    this.clockSkew = clockSkew;
    this.payloads = new PayloadResolver(store);
  }

  /**
   * Runs every attempt in a span of {@code tracing} (default {@link DeliveryTracing#OFF}); call
   * before the claim loop starts.
   */
  public Deliverer traced(DeliveryTracing tracing) {
    this.tracing = tracing;
    return this;
  }

  /**
   * Names {@code relayInstance} (this process) on every attempt it records; call before the claim
   * loop starts.
   */
  public Deliverer madeBy(String relayInstance) {
    this.relayInstance = relayInstance;
    return this;
  }

  /**
   * Records successful sends through {@code batcher} (one transaction per batch) instead of one
   * transaction each; call before the claim loop starts. {@link #close()} closes it.
   */
  public Deliverer completingInBatches(CompletionBatcher batcher) {
    this.completions = batcher;
    return this;
  }

  /** Flushes and stops the batched completion, if any (after the last delivery finished). */
  public void close() {
    if (completions != null) {
      completions.close();
    }
  }

  /**
   * Reports database errors while recording outcomes to {@code database} (its source's state,
   * logged once per change) instead of a warning per retry; call before the claim loop starts.
   */
  public Deliverer reportingTo(StateChangeLog database) {
    this.database = database;
    return this;
  }

  /**
   * One delivery of a claim: started on a worker ({@link #start}), answered by its sink's stage,
   * recorded on a worker; or abandoned at shutdown ({@link #abandon}). Whichever comes first
   * settles it: an answer after the abandonment is ignored, and an abandonment after the answer
   * does nothing.
   */
  public final class Attempt {
    private final LeaseHeartbeat.Claim claim;
    private final Executor workers;
    private final Answered answered;
    private final Runnable finished;
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile DeliveryTracing.Delivery traced;

    private Attempt(
        LeaseHeartbeat.Claim claim, Executor workers, Answered answered, Runnable finished) {
      this.claim = claim;
      this.workers = workers;
      this.answered = answered;
      this.finished = finished;
    }

    public LeaseHeartbeat.Claim claim() {
      return claim;
    }

    /**
     * Checks the claim, then hands the job to its sink; returns once the send started (the answer
     * is handled on {@code workers} when it comes).
     */
    public void start() {
      ClaimedJob m = claim.message();
      if (settled.get()) {
        // Abandoned (shutdown) before it started: released already, so never sent.
        return;
      }
      if (claim.lost()) {
        // The heartbeat found it owned by someone else and reported it: nothing to send or record.
        settleWithout(false);
        return;
      }
      Duration owned = claim.ownedFor();
      if (owned.compareTo(lease.dividedBy(3)) < 0) {
        LOG.warnf(
            "message_id=%d operation_id=%s token=%s: not sent, the claim may expire within %s"
                + " (no heartbeat answered for a while); giving it back",
            m.id(), m.operationId(), m.claimToken(), owned.isNegative() ? Duration.ZERO : owned);
        settleWithout(true);
        return;
      }
      long started = System.nanoTime();
      Instant startedAt = Instant.now().plus(clockSkew.get());
      DeliveryTracing.Delivery t = tracing.start(m);
      traced = t;
      CompletionStage<SinkResult> answer;
      try {
        answer = send(t.message());
      } catch (RuntimeException e) {
        answer = MessageSink.answered(thrown(e));
      }
      answer.whenCompleteAsync(
          (result, error) -> {
            if (settled.compareAndSet(false, true)) {
              SinkResult r =
                  result != null
                      ? result
                      : thrown(
                          error != null
                              ? error
                              : new IllegalStateException("the sink answered no result"));
              answered(r, Duration.ofNanos(System.nanoTime() - started), startedAt);
            }
          },
          workers);
    }

    /**
     * Gives the job back unsent, or stops waiting for its send (shutdown): released to ready
     * without counting an attempt. False when its answer came first (it is being recorded).
     */
    public boolean abandon() {
      if (!settled.compareAndSet(false, true)) {
        return false;
      }
      DeliveryTracing.Delivery t = traced;
      release(claim.message());
      if (t != null) {
        t.released();
      }
      answered.answered(false);
      finished.run();
      return true;
    }

    private void settleWithout(boolean giveBack) {
      if (settled.compareAndSet(false, true)) {
        if (giveBack) {
          release(claim.message());
        }
        answered.answered(false);
        finished.run();
      }
    }

    private void answered(SinkResult result, Duration took, Instant startedAt) {
      ClaimedJob m = claim.message();
      DeliveryTracing.Delivery t = traced;
      // From here a renewal that changes no row may just have lost the race to our own transition.
      claim.recording();
      boolean delivered = false;
      try {
        if (result instanceof SinkResult.Delivered d && completions != null) {
          AttemptRecord a =
              AttemptRecord.success(took, d.summary()).startedAt(startedAt).madeBy(relayInstance);
          completions.submit(
              m,
              a,
              c -> {
                try {
                  t.end(delivered(m, c, took), result);
                } finally {
                  finished.run();
                }
              });
          delivered = true;
          return;
        }
        AttemptOutcome outcome = null;
        try {
          outcome = record(m, result, took, startedAt);
        } finally {
          t.end(outcome, result);
          finished.run();
        }
        delivered = outcome == AttemptOutcome.DELIVERED;
      } finally {
        answered.answered(delivered);
      }
    }
  }

  /** What a delivery tells its claimer once its send no longer takes a place. */
  @FunctionalInterface
  public interface Answered {
    /**
     * @param delivered the sink took the job and its delivery is recorded or being recorded: the
     *     next job of its ordering key may be sent now; false: it failed, was given back or its
     *     claim was lost, and the key's later jobs this relay holds must not be sent before it
     */
    void answered(boolean delivered);
  }

  /**
   * A delivery of {@code claim}'s job, not started yet: {@link Attempt#start} on a worker.
   *
   * @param workers where the sink's answer is recorded (never the sink's own thread: a Kafka or
   *     RabbitMQ client thread must not wait for the database)
   * @param answered runs once the send no longer takes a place: its answer was recorded or handed
   *     to the completion batch, or the job was given back
   * @param finished runs once the outcome is recorded (or the job was given back), possibly later
   *     and from the completion flusher's thread
   */
  public Attempt attempt(
      LeaseHeartbeat.Claim claim, Executor workers, Answered answered, Runnable finished) {
    return new Attempt(claim, workers, answered, finished);
  }

  /**
   * Sends {@code claim}'s job and records the outcome on the calling thread (for tests and tools);
   * {@code finished} as in {@link #attempt}.
   */
  public void deliver(LeaseHeartbeat.Claim claim, Runnable finished) {
    CompletableFuture<Void> answered = new CompletableFuture<>();
    attempt(claim, Runnable::run, delivered -> answered.complete(null), finished).start();
    answered.join();
  }

  private static SinkResult thrown(Throwable e) {
    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    return new SinkResult.RetryLater(
        Optional.empty(), cause.getClass().getName(), String.valueOf(cause.getMessage()), null);
  }

  /** Counts a batched completion's answer; returns the outcome as counted (null: unknown). */
  private AttemptOutcome delivered(ClaimedJob m, CompletionBatcher.Completion c, Duration took) {
    AttemptOutcome outcome =
        switch (c) {
          case COMPLETED -> {
            metrics.endToEnd(Duration.between(m.createdAt(), Instant.now().plus(clockSkew.get())));
            yield AttemptOutcome.DELIVERED;
          }
          case STALE -> {
            stale(m, AttemptOutcome.DELIVERED);
            yield AttemptOutcome.STALE;
          }
          case UNKNOWN -> null;
        };
    metrics.attempt(m.destination(), outcome, took);
    return outcome;
  }

  private void stale(ClaimedJob m, AttemptOutcome outcome) {
    metrics.staleCompletion(outcome);
    LOG.warnf(
        "message_id=%d operation_id=%s token=%s attempt=%d: %s not recorded, the claim was"
            + " lost (lease expired and the job was re-offered); this result changed nothing",
        m.id(), m.operationId(), m.claimToken(), m.attemptNo(), RelayMetrics.outcomeTag(outcome));
  }

  private CompletionStage<SinkResult> send(ClaimedJob m) {
    MessageSink sink = sinks.forDestination(m.destination()).orElse(null);
    if (sink == null) {
      return MessageSink.answered(
          new SinkResult.PermanentFailure(
              "UnknownDestination",
              "no sink is configured for destination '"
                  + m.destination()
                  + "' (set outbox.destinations."
                  + m.destination()
                  + ".type); configured: "
                  + sinks.destinations(),
              null));
    }
    // A by-reference body is loaded only now, under the running heartbeat, and only for a job
    // that has a sink; the claim (m, with its token) still drives the recording.
    PayloadResolver.Resolution resolved = payloads.resolve(m);
    if (resolved.failure() != null) {
      return MessageSink.answered(resolved.failure());
    }
    return sink.deliver(resolved.message());
  }

  /** Returns the outcome as counted: delivered, retry, dead, stale or null (unknown). */
  private AttemptOutcome record(ClaimedJob m, SinkResult result, Duration took, Instant startedAt) {
    AttemptOutcome outcome;
    Boolean applied;
    if (result instanceof SinkResult.Delivered d) {
      AttemptRecord a =
          AttemptRecord.success(took, d.summary()).startedAt(startedAt).madeBy(relayInstance);
      applied = recordReliably(m, AttemptOutcome.DELIVERED, () -> store.markDelivered(m, a));
      outcome = AttemptOutcome.DELIVERED;
      if (Boolean.TRUE.equals(applied)) {
        metrics.endToEnd(Duration.between(m.createdAt(), Instant.now().plus(clockSkew.get())));
      }
    } else if (result instanceof SinkResult.RetryLater r && m.attemptNo() < maxAttempts) {
      Duration delay = backoff.delay(m.attemptNo(), r.retryAfter());
      AttemptRecord a =
          new AttemptRecord(took, r.errorClass(), r.error(), r.summary(), startedAt, relayInstance);
      applied = recordReliably(m, AttemptOutcome.RETRY, () -> store.markForRetry(m, delay, a));
      outcome = AttemptOutcome.RETRY;
      log(m, outcome, r.error() + "; next attempt in " + delay);
    } else {
      AttemptRecord a = deadRecord(m, result, took).startedAt(startedAt).madeBy(relayInstance);
      applied = recordReliably(m, AttemptOutcome.DEAD, () -> store.markDead(m, a));
      outcome = AttemptOutcome.DEAD;
      if (Boolean.TRUE.equals(applied)) {
        metrics.dead(1);
      }
      LOG.errorf(
          "message_id=%d operation_id=%s token=%s destination=%s attempt=%d outcome=dead error=%s",
          m.id(),
          m.operationId(),
          m.claimToken(),
          m.destination(),
          m.attemptNo(),
          a.errorMessage());
    }
    if (applied == null) {
      outcome = null;
    } else if (!applied) {
      stale(m, outcome);
      outcome = AttemptOutcome.STALE;
    }
    metrics.attempt(m.destination(), outcome, took);
    return outcome;
  }

  private AttemptRecord deadRecord(ClaimedJob m, SinkResult result, Duration took) {
    if (result instanceof SinkResult.PermanentFailure p) {
      return new AttemptRecord(
          took, p.errorClass(), "permanent failure: " + p.error(), p.summary());
    }
    SinkResult.RetryLater r = (SinkResult.RetryLater) result;
    return new AttemptRecord(
        took,
        r.errorClass(),
        "gave up after " + m.attemptNo() + " attempts (max " + maxAttempts + "): " + r.error(),
        r.summary());
  }

  private static void log(ClaimedJob m, AttemptOutcome outcome, String detail) {
    LOG.infof(
        "message_id=%d operation_id=%s token=%s destination=%s attempt=%d outcome=%s %s",
        m.id(),
        m.operationId(),
        m.claimToken(),
        m.destination(),
        m.attemptNo(),
        RelayMetrics.outcomeTag(outcome),
        detail);
  }

  /**
   * Runs a token-checked transition; on database errors retries with growing pauses for at most one
   * lease (a retry after a commit whose answer was lost reads its own attempt back and answers
   * true). Returns the transition's result, or null when no try got an answer: the outcome is
   * unknown.
   */
  private Boolean recordReliably(ClaimedJob m, AttemptOutcome outcome, BooleanSupplier transition) {
    long deadline = System.nanoTime() + lease.toNanos();
    Duration pause = RECORD_RETRY_MIN;
    boolean unanswered = false;
    while (true) {
      try {
        StateChangeLog db = database;
        Instant callStarted = db.now();
        // A try that failed may have committed before its answer was lost: read back first.
        boolean changed =
            unanswered && !store.recordedUnder(List.of(m), outcome).isEmpty()
                || transition.getAsBoolean();
        db.success(callStarted);
        return changed;
      } catch (RuntimeException e) {
        if (System.nanoTime() + pause.toNanos() > deadline) {
          LOG.errorf(
              "message_id=%d: recording the outcome got no answer for a whole lease, giving up;"
                  + " the outcome is unknown: recorded, or re-offered by the reaper when the lease expires"
                  + " (the sink deduplicates): %s",
              m.id(), e.getMessage());
          return null;
        }
        database.failure("recording an outcome failed: " + StateChangeLog.describe(e));
        try {
          Thread.sleep(pause.toMillis());
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return null;
        }
        pause = Backoff.doubled(pause, RECORD_RETRY_MAX);
        unanswered = true;
      }
    }
  }

  /** Gives a job back without counting an attempt (shutdown before or during its send). */
  public void release(ClaimedJob m) {
    try {
      if (store.release(m.id(), m.claimToken())) {
        LOG.infof(
            "message_id=%d operation_id=%s released to ready on shutdown", m.id(), m.operationId());
      } else {
        metrics.staleCompletion("release");
      }
    } catch (RuntimeException e) {
      LOG.warnf(
          "message_id=%d: release failed (%s); the reaper will return it when the lease expires",
          m.id(), e.getMessage());
    }
  }
}
