package dev.outboxrelay.relay.lease;

import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.ReapResult;
import dev.outboxrelay.relay.background.BackgroundService;
import dev.outboxrelay.relay.background.Pass;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import java.time.Duration;
import java.util.function.IntFunction;
import org.jboss.logging.Logger;

/**
 * Returns expired leases to ready (or dead at max attempts). An expired lease counts as an attempt,
 * so it is followed by the same back-off as a failed attempt: a job whose relay was too slow under
 * load is not offered again at once, to expire again, and reaches max attempts (dead) no faster
 * than the same number of failures would, each expiry taking a lease besides.
 */
public class LeaseReaper implements BackgroundService {
  private static final Logger LOG = Logger.getLogger(LeaseReaper.class);

  private final OutboxStore store;
  private final RelayMetrics metrics;
  private final int maxAttempts;
  private final int batchSize;
  private final IntFunction<Duration> retryDelay;

  /**
   * @param retryDelay the pause before the next attempt after attempt {@code n} (from 1) failed:
   *     the relay's back-off
   */
  public LeaseReaper(
      OutboxStore store,
      RelayMetrics metrics,
      int maxAttempts,
      int batchSize,
      IntFunction<Duration> retryDelay) {
    this.store = store;
    this.metrics = metrics;
    this.maxAttempts = maxAttempts;
    this.batchSize = batchSize;
    this.retryDelay = retryDelay;
  }

  /** One pass: reaps batches until fewer than a full batch expired; its work is the rows reaped. */
  @Override
  public Pass runOnce() {
    int total = 0;
    ReapResult r;
    do {
      r = store.releaseExpiredLeases(maxAttempts, batchSize, retryDelay);
      total += r.total();
      if (r.total() > 0) {
        metrics.expiredLeases(r.total());
        metrics.dead(r.dead());
        LOG.warnf(
            "reaper returned %d expired lease(s) to ready and moved %d to DEAD (max attempts %d)",
            r.returnedToReady(), r.dead(), maxAttempts);
      }
    } while (r.total() >= batchSize);
    return Pass.done(total);
  }
}
