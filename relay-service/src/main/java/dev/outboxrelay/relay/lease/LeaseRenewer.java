package dev.outboxrelay.relay.lease;

import dev.outboxrelay.outbox.store.ClaimedMessage;
import dev.outboxrelay.outbox.store.OutboxStore;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Heartbeats for deliveries that run longer than a third of the lease: from the start of the
 * send until its outcome is recorded.
 */
public class LeaseRenewer implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(LeaseRenewer.class);

  private final OutboxStore store;
  private final Duration lease;
  private final ScheduledExecutorService timer;
  private final Runnable onLost;
  /** Where renewal errors go; null: a warning per failed renewal. */
  private volatile dev.outboxrelay.relay.health.StateChangeLog database;

  /** @param onLost called once per heartbeat whose renewal found the job owned by someone else */
  public LeaseRenewer(OutboxStore store, Duration lease, Runnable onLost) {
    this.store = store;
    this.lease = lease;
    this.onLost = onLost;
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "outbox-lease-renewer");
      t.setDaemon(true);
      return t;
    });
    // Nearly every heartbeat is stopped long before its first renewal: drop it from the queue at
    // once instead of keeping lease/3 worth of dead tasks (thousands under load) until they fall due.
    timer.setRemoveOnCancelPolicy(true);
    this.timer = timer;
  }

  /** Reports renewal errors to {@code database} (its source's state) instead of a warning each. */
  public LeaseRenewer reportingTo(dev.outboxrelay.relay.health.StateChangeLog database) {
    this.database = database;
    return this;
  }

  /** Starts renewing {@code m}'s lease every lease/3 until {@link Heartbeat#stop()}. */
  public Heartbeat start(ClaimedMessage m) {
    Heartbeat hb = new Heartbeat(m);
    long every = Math.max(1, lease.toMillis() / 3);
    hb.future = timer.scheduleAtFixedRate(hb::renew, every, every, TimeUnit.MILLISECONDS);
    return hb;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }

  /** One job's heartbeat. */
  public final class Heartbeat {
    private final ClaimedMessage message;
    private volatile boolean recording;
    private volatile ScheduledFuture<?> future;

    private Heartbeat(ClaimedMessage message) {
      this.message = message;
    }

    private void renew() {
      try {
        if (!store.renewLease(message.id(), message.claimToken(), lease)) {
          future.cancel(false);
          if (recording) {
            // The owner's own transition may have finished the job a moment ago; if the claim
            // was really lost, that transition changes no row and is counted as stale there.
            return;
          }
          onLost.run();
          LOG.warnf("message_id=%d operation_id=%s token=%s attempt=%d: lease lost during the send"
              + " (renewal changed no row); another relay may own the job", message.id(),
              message.operationId(), message.claimToken(), message.attemptNo());
        }
      } catch (RuntimeException e) {
        // The lease may still be valid: keep trying until the send ends.
        if (database != null) {
          database.failure("renewing a lease failed: " + dev.outboxrelay.relay.health.StateChangeLog.describe(e));
          return;
        }
        LOG.warnf("message_id=%d token=%s: renewing the lease failed, will retry: %s", message.id(),
            message.claimToken(), e.getMessage());
      }
    }

    /**
     * The send is over and its outcome is being recorded: renewals go on, but one that changes
     * no row is no longer reported as lost (the recording transition itself reports that).
     */
    public void recording() {
      recording = true;
    }

    public void stop() {
      ScheduledFuture<?> f = future;
      if (f != null) {
        f.cancel(false);
      }
    }
  }
}
