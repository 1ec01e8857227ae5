package dev.outboxrelay.relay.lease;

import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.background.BackgroundService;
import dev.outboxrelay.relay.background.Pass;
import dev.outboxrelay.relay.background.ServiceRunner;
import dev.outboxrelay.relay.state.StateChangeLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * One heartbeat for every claim a source holds: every {@code lease/3} one token-checked statement
 * ({@link OutboxStore#renewLeases}) extends the lease of each claim held, from the claim until its
 * outcome is recorded, and answers which are still owned. A claim not returned is lost: it is
 * marked {@link Claim#lost()} (a job not yet sent is then not sent) and reported once. No timer per
 * job.
 *
 * <p>Each claim also knows until when, at the latest, this relay owns it on its own clock ({@link
 * Claim#ownedFor()}): the start of the last statement that claimed or renewed it plus the lease,
 * which is never later than the database's {@code lease_until}.
 */
public final class LeaseHeartbeat implements BackgroundService, AutoCloseable {
  private static final Logger LOG = Logger.getLogger(LeaseHeartbeat.class);

  private final OutboxStore store;
  private final Duration lease;
  private final Consumer<Claim> onLost;
  private final Map<Long, Claim> held = new ConcurrentHashMap<>();
  private final String threadName;
  private ServiceRunner runner;

  /**
   * @param onLost called once for each claim a pass found lost (not recording: a recording claim's
   *     own transition reports it)
   */
  public LeaseHeartbeat(OutboxStore store, Duration lease, String source, Consumer<Claim> onLost) {
    this.store = store;
    this.lease = lease;
    this.onLost = onLost;
    this.threadName = "outbox-lease-heartbeat" + (source == null ? "" : "-" + source);
    reportingTo(StateChangeLog.logging("the lease heartbeat's database", LOG));
  }

  /**
   * Reports each pass to {@code database} (its source's state, which logs each change once); call
   * before {@link #start()}. A failed pass is tried again after a pause growing from 100ms, at the
   * latest after {@link #interval()} (the leases may still be valid).
   */
  public LeaseHeartbeat reportingTo(StateChangeLog database) {
    this.runner =
        new ServiceRunner(threadName, "renewing leases failed", this, database).every(interval());
    return this;
  }

  /** Time between passes: a third of the lease. */
  public Duration interval() {
    return Duration.ofMillis(Math.max(1, lease.toMillis() / 3));
  }

  /**
   * Holds {@code m} from now on; {@code claimStartedNanos} is when the claim statement started
   * ({@link System#nanoTime()}), the earliest its lease can have been set.
   */
  public Claim hold(ClaimedJob m, long claimStartedNanos) {
    Claim c = new Claim(m, claimStartedNanos + lease.toNanos());
    held.put(m.id(), c);
    return c;
  }

  /** The claim's outcome is recorded (or it was given back): no more renewals. */
  public void forget(Claim c) {
    held.remove(c.message.id(), c);
  }

  /** Claims held now. */
  public int held() {
    return held.size();
  }

  /**
   * One pass: renews every claim held in one statement (chunked by the store). Its work is the
   * number of claims found lost; it asks nothing while no claim is held. Throws when the statement
   * fails (the leases may still be valid; the next pass tries again).
   */
  @Override
  public Pass runOnce() {
    Map<Long, UUID> claims = new HashMap<>();
    List<Claim> asked = new ArrayList<>();
    for (Claim c : held.values()) {
      if (!c.lost) {
        claims.put(c.message.id(), c.message.claimToken());
        asked.add(c);
      }
    }
    if (claims.isEmpty()) {
      return Pass.idle();
    }
    long started = System.nanoTime();
    Set<Long> renewed = store.renewLeases(claims, lease);
    int lost = 0;
    for (Claim c : asked) {
      if (renewed.contains(c.message.id())) {
        c.ownedUntilNanos = started + lease.toNanos();
      } else if (held.get(c.message.id()) == c && !c.recording && !c.lost) {
        // Recording: the owner's own transition may have finished the job a moment ago; if the
        // claim was really lost, that transition changes no row and reports it there.
        c.lost = true;
        lost++;
        LOG.warnf(
            "message_id=%d operation_id=%s token=%s attempt=%d: lease lost (the heartbeat"
                + " changed no row); another relay may own the job",
            c.message.id(), c.message.operationId(), c.message.claimToken(), c.message.attemptNo());
        onLost.accept(c);
      }
    }
    return Pass.done(lost);
  }

  /** Starts the passes, every {@link #interval()}, on a thread of its own. */
  public void start() {
    runner.start();
  }

  /** The runner of the passes (a test waits on its {@link ServiceRunner#passes()}). */
  public ServiceRunner runner() {
    return runner;
  }

  @Override
  public void close() {
    runner.close();
  }

  /** One claim this relay holds. */
  public static final class Claim {
    private final ClaimedJob message;
    private volatile long ownedUntilNanos;
    private volatile boolean recording;
    private volatile boolean lost;

    Claim(ClaimedJob message, long ownedUntilNanos) {
      this.message = message;
      this.ownedUntilNanos = ownedUntilNanos;
    }

    public ClaimedJob message() {
      return message;
    }

    /** A heartbeat found the claim owned by someone else (reported once, by the heartbeat). */
    public boolean lost() {
      return lost;
    }

    /**
     * How long this relay still owns the claim at least, by its own clock (negative: it may already
     * have expired).
     */
    public Duration ownedFor() {
      return Duration.ofNanos(ownedUntilNanos - System.nanoTime());
    }

    /**
     * The send is over and its outcome is being recorded: renewals go on, but one that changes no
     * row is no longer reported as lost (the recording transition itself reports that).
     */
    public void recording() {
      recording = true;
    }
  }
}
