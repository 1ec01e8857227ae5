package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.store.AttemptRecord;
import dev.outboxrelay.outbox.store.ClaimedMessage;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.lease.LeaseRenewer;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.MessageSink;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.sink.SinkResult;
import dev.outboxrelay.relay.tracing.DeliveryTracing;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Delivers one claimed job and records the outcome: load a by-reference body ({@link
 * PayloadResolver}), send (heartbeat running), then one token-checked transition. A transition that changes no row is counted as a stale completion
 * and changes nothing. A recording that fails on a database error is retried until the lease
 * would have expired; after that the reaper re-offers the job and the sink deduplicates.
 */
public class Deliverer {
  private static final Logger LOG = Logger.getLogger(Deliverer.class);
  private static final Duration RECORD_RETRY_MIN = Duration.ofMillis(100);
  private static final Duration RECORD_RETRY_MAX = Duration.ofSeconds(2);

  private final OutboxStore store;
  private final SinkRegistry sinks;
  private final LeaseRenewer renewer;
  private final Backoff backoff;
  private final RelayMetrics metrics;
  private final int maxAttempts;
  private final Duration lease;
  private final Supplier<Duration> clockSkew;
  private final PayloadResolver payloads;
  private DeliveryTracing tracing = DeliveryTracing.OFF;
  private CompletionBatcher completions;
  /** Where recording errors go; null: a warning per retry. */
  private volatile dev.outboxrelay.relay.health.StateChangeLog database;

  /**
   * @param clockSkew database clock minus this process's clock, for commit-to-sent latency
   */
  public Deliverer(OutboxStore store, SinkRegistry sinks, LeaseRenewer renewer, Backoff backoff,
      RelayMetrics metrics, int maxAttempts, Duration lease, Supplier<Duration> clockSkew) {
    this.store = store;
    this.sinks = sinks;
    this.renewer = renewer;
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
  public Deliverer reportingTo(dev.outboxrelay.relay.health.StateChangeLog database) {
    this.database = database;
    return this;
  }

  /**
   * Delivers and records. On interruption (shutdown) the job is released, not counted. The
   * heartbeat runs until the outcome is recorded, not only during the send: recording can wait
   * (for a pooled connection, or retrying a database error), and a lease that expired in that
   * wait would make a finished delivery look abandoned and be sent again.
   */
  public void deliver(ClaimedMessage m) {
    long started = System.nanoTime();
    DeliveryTracing.Delivery traced = tracing.start(m);
    String outcome = null;
    SinkResult result = null;
    LeaseRenewer.Heartbeat heartbeat = renewer.start(m);
    try {
      try {
        result = send(traced.message());
      } catch (InterruptedException e) {
        heartbeat.stop();
        release(m);
        Thread.currentThread().interrupt();
        return;
      }
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      // From here a renewal that changes no row may just have lost the race to our own transition.
      heartbeat.recording();
      outcome = record(m, result, took);
    } finally {
      heartbeat.stop();
      traced.end(outcome, result);
    }
  }

  private SinkResult send(ClaimedMessage m) throws InterruptedException {
    MessageSink sink = sinks.forDestination(m.destination()).orElse(null);
    if (sink == null) {
      return new SinkResult.PermanentFailure("UnknownDestination",
          "no sink is configured for destination '" + m.destination() + "' (set outbox.destinations."
              + m.destination() + ".type); configured: " + sinks.destinations(), null);
    }
    // A by-reference body is loaded only now, under the running heartbeat, and only for a job
    // that has a sink; the claim (m, with its token) still drives the recording.
    PayloadResolver.Resolution resolved = payloads.resolve(m);
    if (resolved.failure() != null) {
      return resolved.failure();
    }
    try {
      return sink.deliver(resolved.message());
    } catch (RuntimeException e) {
      return new SinkResult.RetryLater(java.util.Optional.empty(), e.getClass().getName(),
          String.valueOf(e.getMessage()), null);
    }
  }

  /** Returns the outcome as counted: delivered, retry, dead or stale. */
  private String record(ClaimedMessage m, SinkResult result, Duration took) {
    String outcome;
    boolean applied;
    if (result instanceof SinkResult.Delivered d) {
      AttemptRecord a = AttemptRecord.success(took, d.summary());
      applied = recordReliably(m, () -> completions != null ? completions.markDelivered(m, a)
          : store.markDelivered(m, a));
      outcome = "delivered";
      if (applied) {
        metrics.endToEnd(Duration.between(m.createdAt(), Instant.now().plus(clockSkew.get())));
      }
    } else if (result instanceof SinkResult.RetryLater r && m.attemptNo() < maxAttempts) {
      Duration delay = backoff.delay(m.attemptNo(), r.retryAfter());
      AttemptRecord a = new AttemptRecord(took, r.errorClass(), r.error(), r.summary());
      applied = recordReliably(m, () -> store.markForRetry(m, delay, a));
      outcome = "retry";
      log(m, outcome, r.error() + "; next attempt in " + delay);
    } else {
      AttemptRecord a = deadRecord(m, result, took);
      applied = recordReliably(m, () -> store.markDead(m, a));
      outcome = "dead";
      if (applied) {
        metrics.dead(1);
      }
      LOG.errorf("message_id=%d operation_id=%s token=%s destination=%s attempt=%d outcome=dead error=%s",
          m.id(), m.operationId(), m.claimToken(), m.destination(), m.attemptNo(), a.errorMessage());
    }
    if (!applied) {
      metrics.staleCompletion(outcome);
      LOG.warnf("message_id=%d operation_id=%s token=%s attempt=%d: %s not recorded, the claim was"
              + " lost (lease expired and the job was re-offered); this result changed nothing",
          m.id(), m.operationId(), m.claimToken(), m.attemptNo(), outcome);
      outcome = "stale";
    }
    metrics.attempt(m.destination(), outcome, took);
    return outcome;
  }

  private AttemptRecord deadRecord(ClaimedMessage m, SinkResult result, Duration took) {
    if (result instanceof SinkResult.PermanentFailure p) {
      return new AttemptRecord(took, p.errorClass(), "permanent failure: " + p.error(), p.summary());
    }
    SinkResult.RetryLater r = (SinkResult.RetryLater) result;
    return new AttemptRecord(took, r.errorClass(),
        "gave up after " + m.attemptNo() + " attempts (max " + maxAttempts + "): " + r.error(), r.summary());
  }

  private static void log(ClaimedMessage m, String outcome, String detail) {
    LOG.infof("message_id=%d operation_id=%s token=%s destination=%s attempt=%d outcome=%s %s",
        m.id(), m.operationId(), m.claimToken(), m.destination(), m.attemptNo(), outcome, detail);
  }

  /**
   * Runs a token-checked transition; on database errors retries with growing pauses for at most
   * one lease. Returns the transition's result, or false when it never got through.
   */
  private boolean recordReliably(ClaimedMessage m, BooleanSupplier transition) {
    long deadline = System.nanoTime() + lease.toNanos();
    Duration pause = RECORD_RETRY_MIN;
    while (true) {
      try {
        dev.outboxrelay.relay.health.StateChangeLog db = database;
        Instant callStarted = db == null ? null : db.now();
        boolean changed = transition.getAsBoolean();
        if (db != null) {
          db.success(callStarted);
        }
        return changed;
      } catch (RuntimeException e) {
        if (System.nanoTime() + pause.toNanos() > deadline) {
          LOG.errorf("message_id=%d: recording the outcome failed for a whole lease, giving up (the"
              + " reaper will re-offer it; the sink deduplicates): %s", m.id(), e.getMessage());
          return false;
        }
        if (database != null) {
          database.failure("recording an outcome failed: " + dev.outboxrelay.relay.health.StateChangeLog.describe(e));
        } else {
          LOG.warnf("message_id=%d: recording the outcome failed, retrying in %s: %s",
              m.id(), pause, e.getMessage());
        }
        try {
          Thread.sleep(pause.toMillis());
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return false;
        }
        pause = Backoff.doubled(pause, RECORD_RETRY_MAX);
      }
    }
  }

  /** Gives a job back without counting an attempt (shutdown before or during its send). */
  public void release(ClaimedMessage m) {
    try {
      if (store.release(m.id(), m.claimToken())) {
        LOG.infof("message_id=%d operation_id=%s released to ready on shutdown", m.id(), m.operationId());
      } else {
        metrics.staleCompletion("release");
      }
    } catch (RuntimeException e) {
      LOG.warnf("message_id=%d: release failed (%s); the reaper will return it when the lease expires",
          m.id(), e.getMessage());
    }
  }
}
