package dev.outboxrelay.relay.maintenance;

import dev.outboxrelay.outbox.store.FleetLock;
import dev.outboxrelay.outbox.store.LockHolder;
import dev.outboxrelay.outbox.store.OutboxStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Retention: one pass ({@link #retainOnce()}) deletes old finished jobs in batches while holding
 * the fleet-wide {@value #RETENTION_LOCK} lease; {@link #runScheduled()} is the schedule's tick.
 * Thread-safe as far as the lease goes: two passes never overlap, in one relay or across relays.
 */
public class RetentionService {
  private static final Logger LOG = Logger.getLogger(RetentionService.class);

  /** Name of the fleet lock in {@code outbox_lock}. */
  public static final String RETENTION_LOCK = "retention";

  /**
   * Lease of the fleet lock, renewed after every batch: one batch statement must finish within it.
   * A crashed relay's lease expires after it and another relay takes over.
   */
  public static final Duration LOCK_LEASE = Duration.ofMinutes(2);

  private final OutboxStore store;
  private final FleetLock locks;
  private final RetentionSettings settings;
  private final RetentionMetrics metrics;
  private final String owner;

  /** What one pass did. {@code capped}: it stopped at max-per-pass with old jobs possibly left. */
  public record RetentionPass(long deleted, int batches, boolean capped) {}

  /**
   * @param locks the fleet locks ({@code outbox_lock}) on the same database as {@code store}
   * @param owner this relay instance, as the lock owner
   */
  public RetentionService(
      OutboxStore store,
      FleetLock locks,
      RetentionSettings settings,
      RetentionMetrics metrics,
      String owner) {
    this.store = Objects.requireNonNull(store, "store");
    this.locks = Objects.requireNonNull(locks, "locks");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    this.owner = Objects.requireNonNull(owner, "owner");
  }

  /**
   * The schedule's tick: reads when the latest pass on any relay ended (for the gauge), skips when
   * that was less than half an interval ago (another relay's tick did the work), else runs a pass.
   * Empty when skipped.
   */
  public Optional<RetentionPass> runScheduled() {
    Optional<LockHolder> holder = locks.holder(RETENTION_LOCK);
    if (holder.isPresent() && holder.get().expired()) {
      Duration sinceLastPass = Duration.between(holder.get().leaseUntil(), holder.get().now());
      metrics.lastRun(sinceLastPass);
      if (sinceLastPass.compareTo(settings.interval().dividedBy(2)) < 0) {
        LOG.debugf("retention skipped: a pass ended %s ago", sinceLastPass);
        return Optional.empty();
      }
    }
    return retainOnce();
  }

  /**
   * One pass: batches of {@code batch-size} until a batch deletes fewer than it asked for or {@code
   * max-per-pass} jobs are deleted, under the fleet lease (renewed after every batch; a pass whose
   * lease was lost stops). Empty, and nothing deleted, when another relay holds the lease. Logs one
   * line per pass. Database errors propagate after the lease is released; the batches committed
   * before them stay deleted and counted.
   */
  public Optional<RetentionPass> retainOnce() {
    if (!locks.acquire(RETENTION_LOCK, owner, LOCK_LEASE)) {
      LOG.debugf("retention skipped: another relay holds the lease");
      return Optional.empty();
    }
    long started = System.nanoTime();
    long deleted = 0;
    int batches = 0;
    boolean leaseLost = false;
    try {
      while (deleted < settings.maxPerPass()) {
        int limit = (int) Math.min(settings.batchSize(), settings.maxPerPass() - deleted);
        int n = store.deleteFinishedBefore(settings.keep(), limit);
        batches++;
        deleted += n;
        metrics.deleted(n);
        if (n < limit) {
          break;
        }
        if (!locks.renew(RETENTION_LOCK, owner, LOCK_LEASE)) {
          leaseLost = true;
          break;
        }
      }
    } catch (RuntimeException e) {
      LOG.errorf(
          "retention pass failed after deleting %d job(s) in %d batch(es): %s",
          deleted, batches, e.getMessage());
      throw e;
    } finally {
      locks.release(RETENTION_LOCK, owner);
    }
    metrics.lastRun(Duration.ZERO);
    boolean capped = deleted >= settings.maxPerPass();
    long millis = (System.nanoTime() - started) / 1_000_000;
    if (leaseLost) {
      LOG.warnf(
          "retention pass stopped: its lease expired (a batch took longer than %s); deleted %d job(s)"
              + " in %d batch(es), %d ms",
          LOCK_LEASE, deleted, batches, millis);
    } else {
      LOG.infof(
          "retention pass: deleted %d sent/confirmed job(s) older than %s in %d batch(es) of at most %d,"
              + " %d ms%s",
          deleted,
          settings.keep(),
          batches,
          settings.batchSize(),
          millis,
          capped
              ? " (stopped at max-per-pass " + settings.maxPerPass() + "; the next pass goes on)"
              : "");
    }
    return Optional.of(new RetentionPass(deleted, batches, capped));
  }
}
