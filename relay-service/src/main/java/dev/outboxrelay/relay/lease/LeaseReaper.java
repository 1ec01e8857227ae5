package dev.outboxrelay.relay.lease;

import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.ReapResult;
import dev.outboxrelay.relay.background.BackgroundService;
import dev.outboxrelay.relay.background.Pass;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import org.jboss.logging.Logger;

/** Returns expired leases to ready (or dead at max attempts). */
public class LeaseReaper implements BackgroundService {
  private static final Logger LOG = Logger.getLogger(LeaseReaper.class);

  private final OutboxStore store;
  private final RelayMetrics metrics;
  private final int maxAttempts;
  private final int batchSize;

  public LeaseReaper(OutboxStore store, RelayMetrics metrics, int maxAttempts, int batchSize) {
    this.store = store;
    this.metrics = metrics;
    this.maxAttempts = maxAttempts;
    this.batchSize = batchSize;
  }

  /** One pass: reaps batches until fewer than a full batch expired; its work is the rows reaped. */
  @Override
  public Pass runOnce() {
    int total = 0;
    ReapResult r;
    do {
      r = store.releaseExpiredLeases(maxAttempts, batchSize);
      total += r.total();
      if (r.total() > 0) {
        metrics.expiredLeases(r.total());
        metrics.dead(r.dead());
        LOG.warnf("reaper returned %d expired lease(s) to ready and moved %d to DEAD (max attempts %d)",
            r.returnedToReady(), r.dead(), maxAttempts);
      }
    } while (r.total() >= batchSize);
    return Pass.done(total);
  }
}
