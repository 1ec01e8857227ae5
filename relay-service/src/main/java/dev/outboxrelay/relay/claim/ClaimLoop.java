package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedMessage;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.lease.LeaseHeartbeat;
import dev.outboxrelay.relay.state.StateChangeLog;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * Claims jobs and keeps the workers fed: a claim runs while the jobs of the last one are being
 * sent, so a worker that finishes finds its next job waiting instead of waiting for a claim.
 *
 * <p>Back-pressure: claimed jobs wait in a queue of at most one batch ahead of the workers
 * ({@code concurrency} sending + {@code batchSize} queued), and the claims held (queued, sending,
 * or waiting for their completion batch) never exceed {@code 2 x (concurrency + batchSize)}, so
 * memory is bounded whatever the backlog. Every claim held is renewed by the source's {@link
 * LeaseHeartbeat}, and a job is sent only while its claim surely has a third of its lease left
 * ({@link Deliverer}). A claim asks for what there is room for, up to a batch: it runs at once
 * when a worker would otherwise be idle (the queue is empty and a worker is free), else once half
 * a batch of room has freed, so under load a claim statement moves many jobs. A worker that frees
 * wakes the loop; a finished job with an ordering key also ends an idle wait, because its key's
 * next job has just become claimable.
 *
 * <p>Idle: an empty claim waits a bounded, growing interval ({@link IdleWait}), cut short by
 * {@link #wake()}. Errors: logged once per state change, with a growing pause; the loop never
 * dies. Shutdown ({@link #stop}): stop claiming, give the queued jobs back, let in-flight sends
 * finish within the grace period, then interrupt them; given-back and interrupted jobs are
 * released to ready without counting an attempt.
 */
public class ClaimLoop {
  private static final Logger LOG = Logger.getLogger(ClaimLoop.class);
  private static final Duration ERROR_PAUSE_MAX = Duration.ofSeconds(5);

  private final OutboxStore store;
  private final Deliverer deliverer;
  private final LeaseHeartbeat heartbeat;
  private final int batchSize;
  private final int concurrency;
  private final Duration lease;
  private final IdleWait idle;
  /** Claimed jobs no worker has taken yet, in claim (id) order. */
  private final BlockingQueue<LeaseHeartbeat.Claim> queue = new LinkedBlockingQueue<>();
  private final AtomicInteger sending = new AtomicInteger();
  /** Notified each time room for a claim frees. */
  private final Object roomFreed = new Object();
  private final ExecutorService workers;
  /** Every claim held: queued, sending, or waiting for its completion. */
  private final Map<Long, LeaseHeartbeat.Claim> inFlight = new ConcurrentHashMap<>();
  private final AtomicInteger claimStatements = new AtomicInteger();
  private final AtomicReference<String> lastError = new AtomicReference<>();
  private volatile boolean running;
  private volatile boolean stopping;
  private Thread thread;
  /** Where claim errors and recoveries go (logged once per state change). */
  private volatile StateChangeLog database = StateChangeLog.logging("the claim loop's database", LOG);
  private volatile Duration errorPauseMax = ERROR_PAUSE_MAX;
  /** The source named in thread names ({@code outbox-worker-<source>-3}); null for a single source. */
  private volatile String source;

  public ClaimLoop(OutboxStore store, Deliverer deliverer, LeaseHeartbeat heartbeat, int batchSize,
      int concurrency, Duration lease, IdleWait idle) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("outbox.relay.batch-size must be positive, was " + batchSize);
    }
    if (concurrency <= 0) {
      throw new IllegalArgumentException("outbox.relay.concurrency must be positive, was " + concurrency);
    }
    this.store = store;
    this.deliverer = deliverer;
    this.heartbeat = heartbeat;
    this.batchSize = batchSize;
    this.concurrency = concurrency;
    this.lease = lease;
    this.idle = idle;
    AtomicInteger n = new AtomicInteger();
    this.workers = Executors.newFixedThreadPool(concurrency, r -> {
      Thread t = new Thread(r, "outbox-worker-" + (source == null ? "" : source + "-") + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    for (int i = 0; i < concurrency; i++) {
      workers.execute(this::work);
    }
  }

  /**
   * Reports claim failures and successes to {@code database} (its source's state, which logs each
   * change once) instead of logging them here, and pauses up to {@code errorMaxWait} between failed
   * claims; call before {@link #start()}.
   */
  public ClaimLoop reportingTo(StateChangeLog database, Duration errorMaxWait) {
    this.database = database;
    this.errorPauseMax = errorMaxWait;
    return this;
  }

  /**
   * Names this loop's threads after {@code source} ({@code outbox-claim-loop-orders}, {@code
   * outbox-worker-orders-3}), so log lines of several sources tell them apart; call before {@link
   * #start()}.
   */
  public ClaimLoop namedAfter(String source) {
    this.source = source;
    return this;
  }

  /** How many jobs a claim may ask for now: free sending and queue places, within the hold limit. */
  int room() {
    if (stopping) {
      return 0;
    }
    int unsent = queue.size() + sending.get();
    int maxHeld = 2 * (concurrency + batchSize);
    return Math.max(0, Math.min(batchSize, Math.min(concurrency + batchSize - unsent, maxHeld - inFlight.size())));
  }

  /** A claim is worth a statement now: a worker would be idle without it, or half a batch fits. */
  private boolean claimDue() {
    int room = room();
    return room > 0 && ((queue.isEmpty() && sending.get() < concurrency) || room >= Math.max(1, batchSize / 2));
  }

  /**
   * One pass: claims as many jobs as there is {@link #room()} for (up to a batch) and queues them
   * for the workers. Returns the number claimed (0 when nothing was ready or there was no room).
   */
  public int claimOnce() {
    int wanted = room();
    if (wanted == 0 || stopping) {
      return 0;
    }
    claimStatements.incrementAndGet();
    long started = System.nanoTime();
    List<ClaimedMessage> claimed = store.claimBatch(ClaimRequest.of(wanted, lease));
    if (claimed.size() > wanted) {
      // Impossible by the claim contract; the extra leases expire and the reaper re-offers them.
      throw new IllegalStateException("claim returned " + claimed.size() + " jobs for a limit of "
          + wanted + " (ids " + claimed.get(0).id() + ".." + claimed.get(claimed.size() - 1).id() + ")");
    }
    offer(claimed, started);
    return claimed.size();
  }

  /**
   * Holds and queues jobs claimed for this loop by a statement that started at {@code
   * claimStartedNanos}: a claim's, or a completion's key-affine hand-over ({@link CompletionBatcher}).
   */
  void offer(List<ClaimedMessage> claimed, long claimStartedNanos) {
    if (stopping) {
      claimed.forEach(deliverer::release); // handed over after shutdown began: never sent
      return;
    }
    for (ClaimedMessage m : claimed) {
      LeaseHeartbeat.Claim c = heartbeat.hold(m, claimStartedNanos);
      inFlight.put(m.id(), c);
      queue.add(c);
    }
  }

  /** A worker: takes queued claims one by one until the loop stops. */
  private void work() {
    while (!stopping) {
      LeaseHeartbeat.Claim c;
      try {
        c = queue.poll(100, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        return;
      }
      if (c == null) {
        continue;
      }
      sending.incrementAndGet();
      try {
        deliverer.deliver(c, () -> finished(c));
      } catch (RuntimeException e) {
        LOG.errorf(e, "message_id=%d: delivery failed unexpectedly; the lease expires and the reaper"
            + " re-offers it", c.message().id());
        finished(c);
      } finally {
        sending.decrementAndGet();
        roomFreed();
      }
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
    }
  }

  /** The claim's outcome is recorded (or it was given back): it is no longer held. */
  private void finished(LeaseHeartbeat.Claim c) {
    heartbeat.forget(c);
    inFlight.remove(c.message().id(), c);
    roomFreed();
    if (c.message().orderingKey() != null) {
      // Its key's next job has just become claimable.
      idle.wake();
    }
  }

  private void roomFreed() {
    synchronized (roomFreed) {
      roomFreed.notifyAll();
    }
  }

  public synchronized void start() {
    if (running) {
      return;
    }
    running = true;
    thread = new Thread(this::run, "outbox-claim-loop" + (source == null ? "" : "-" + source));
    thread.setDaemon(true);
    thread.start();
    heartbeat.start();
  }

  private void run() {
    Duration errorPause = Duration.ofMillis(100);
    while (running) {
      try {
        if (!claimDue()) {
          // No room, or a claim would move too few jobs: wait for room instead of polling the database.
          synchronized (roomFreed) {
            if (!claimDue()) {
              roomFreed.wait(100);
            }
          }
          continue;
        }
        StateChangeLog db = database;
        java.time.Instant callStarted = db.now();
        int statementsBefore = claimStatements.get();
        int claimed = claimOnce();
        lastError.set(null);
        if (claimStatements.get() != statementsBefore) {
          db.success(callStarted);
        }
        errorPause = Duration.ofMillis(100);
        if (claimed > 0) {
          idle.reset();
        } else {
          idle.await(idle.nextWait());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (RuntimeException e) {
        String message = String.valueOf(e.getCause() != null ? e.getCause().getMessage() : e.getMessage());
        lastError.set(message);
        database.failure("claiming failed: " + message);
        try {
          Thread.sleep(errorPause.toMillis());
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          break;
        }
        errorPause = Backoff.doubled(errorPause, errorPauseMax);
      }
    }
  }

  /**
   * Stops claiming, gives the queued jobs back (never sent), waits up to {@code grace} for
   * in-flight deliveries, then interrupts the rest (their jobs are released), records the
   * completions still pending and stops the heartbeat. Returns the number of sends interrupted and
   * released unfinished (0 normally).
   */
  public int stop(Duration grace) {
    Thread t;
    synchronized (this) {
      running = false;
      stopping = true;
      t = thread;
    }
    if (t != null) {
      t.interrupt();
      try {
        t.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    int givenBack = 0;
    for (LeaseHeartbeat.Claim c; (c = queue.poll()) != null; givenBack++) {
      deliverer.release(c.message());
      finished(c);
    }
    if (givenBack > 0) {
      LOG.infof("gave back %d claimed job(s) that no worker had started", givenBack);
    }
    int released = 0;
    workers.shutdown();
    try {
      if (!workers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warnf("%d delivery(ies) still running after the %s grace period; interrupting and"
            + " releasing them", sending.get(), grace);
        released += sending.get();
        workers.shutdownNow();
        workers.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    deliverer.close();
    heartbeat.close();
    return released;
  }

  /**
   * Claims now if the loop is waiting idle (or at its next idle wait): jobs were committed. Safe from
   * any thread; costs at most one claim statement when nothing turns out to be ready.
   */
  public void wake() {
    idle.wake();
  }

  public boolean running() {
    return running && thread != null && thread.isAlive();
  }

  /** The last claim error, or null when the last claim succeeded. */
  public String lastError() {
    return lastError.get();
  }

  /** Claims held: queued, sending, or waiting for their completion. */
  public int inFlight() {
    return inFlight.size();
  }

  /** Claims taken by a worker and not yet recorded: sending, or waiting for their completion. */
  public int sendingOrRecording() {
    return inFlight.size() - queue.size();
  }

  public int claimStatements() {
    return claimStatements.get();
  }
}
