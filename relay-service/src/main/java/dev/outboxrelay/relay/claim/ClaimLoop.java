package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedMessage;
import dev.outboxrelay.outbox.store.OutboxStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * Claims jobs for free workers and hands each to the {@link Deliverer}.
 *
 * <p>Back-pressure: a claim asks for at most {@code min(batchSize, free workers)} jobs, so
 * nothing claimed ever waits in a queue while its lease runs. And it waits until at least half a
 * batch of workers is free ({@link #claimThreshold()}): under load, workers free up one by one,
 * and claiming for each would cost a claim statement per job. Idle: an empty claim waits a
 * bounded, growing interval ({@link IdleWait}), cut short by {@link #wake()}. Errors: logged once per state change, with a
 * growing pause; the loop never dies. Shutdown ({@link #stop}): stop claiming, let in-flight
 * sends finish within the grace period, then interrupt them; interrupted jobs are released to
 * ready without counting an attempt.
 */
public class ClaimLoop {
  private static final Logger LOG = Logger.getLogger(ClaimLoop.class);
  private static final Duration ERROR_PAUSE_MAX = Duration.ofSeconds(5);

  private final OutboxStore store;
  private final Deliverer deliverer;
  private final int batchSize;
  private final Duration lease;
  private final IdleWait idle;
  private final Semaphore freeWorkers;
  private final int claimThreshold;
  /** Notified each time a worker becomes free. */
  private final Object workerFreed = new Object();
  private final ExecutorService workers;
  private final Map<Long, ClaimedMessage> inFlight = new ConcurrentHashMap<>();
  private final AtomicInteger claimStatements = new AtomicInteger();
  private final AtomicReference<String> lastError = new AtomicReference<>();
  private volatile boolean running;
  private Thread thread;
  /** Where claim errors and recoveries go; null: logged here, once per state change. */
  private volatile dev.outboxrelay.relay.health.StateChangeLog database;
  private volatile Duration errorPauseMax = ERROR_PAUSE_MAX;
  /** The source named in thread names ({@code outbox-worker-<source>-3}); null for a single source. */
  private volatile String source;

  public ClaimLoop(OutboxStore store, Deliverer deliverer, int batchSize, int concurrency,
      Duration lease, IdleWait idle) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException("outbox.relay.batch-size must be positive, was " + batchSize);
    }
    if (concurrency <= 0) {
      throw new IllegalArgumentException("outbox.relay.concurrency must be positive, was " + concurrency);
    }
    this.store = store;
    this.deliverer = deliverer;
    this.batchSize = batchSize;
    this.lease = lease;
    this.idle = idle;
    this.freeWorkers = new Semaphore(concurrency);
    this.claimThreshold = Math.max(1, Math.min(batchSize, concurrency) / 2);
    AtomicInteger n = new AtomicInteger();
    this.workers = Executors.newFixedThreadPool(concurrency, r -> {
      Thread t = new Thread(r, "outbox-worker-" + (source == null ? "" : source + "-") + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /** Free workers a claim waits for: half a batch (at most half the workers), at least 1. */
  public int claimThreshold() {
    return claimThreshold;
  }

  /**
   * Reports claim failures and successes to {@code database} (its source's state, which logs each
   * change once) instead of logging them here, and pauses up to {@code errorMaxWait} between failed
   * claims; call before {@link #start()}.
   */
  public ClaimLoop reportingTo(dev.outboxrelay.relay.health.StateChangeLog database, Duration errorMaxWait) {
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

  /**
   * One pass: claims up to {@code min(batchSize, free workers)} jobs and dispatches them.
   * Returns the number claimed (0 when nothing was ready or fewer than {@link #claimThreshold()}
   * workers were free).
   */
  public int claimOnce() {
    int wanted = Math.min(batchSize, freeWorkers.availablePermits());
    if (wanted < claimThreshold || !freeWorkers.tryAcquire(wanted)) {
      return 0;
    }
    List<ClaimedMessage> claimed;
    try {
      claimStatements.incrementAndGet();
      claimed = store.claimBatch(ClaimRequest.of(wanted, lease));
    } catch (RuntimeException e) {
      freeWorkers.release(wanted);
      throw e;
    }
    if (claimed.size() > wanted) {
      // Impossible by the claim contract; the extra leases expire and the reaper re-offers them.
      freeWorkers.release(wanted);
      throw new IllegalStateException("claim returned " + claimed.size() + " jobs for a limit of "
          + wanted + " (ids " + claimed.get(0).id() + ".." + claimed.get(claimed.size() - 1).id() + ")");
    }
    freeWorkers.release(wanted - claimed.size());
    for (ClaimedMessage m : claimed) {
      inFlight.put(m.id(), m);
      workers.execute(() -> {
        try {
          deliverer.deliver(m);
        } finally {
          inFlight.remove(m.id());
          freeWorkers.release();
          synchronized (workerFreed) {
            workerFreed.notifyAll();
          }
        }
      });
    }
    return claimed.size();
  }

  public synchronized void start() {
    if (running) {
      return;
    }
    running = true;
    thread = new Thread(this::run, "outbox-claim-loop" + (source == null ? "" : "-" + source));
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    Duration errorPause = Duration.ofMillis(100);
    while (running) {
      try {
        if (freeWorkers.availablePermits() < claimThreshold) {
          // Too few workers free for a claim: wait for one to finish instead of polling the database.
          synchronized (workerFreed) {
            if (freeWorkers.availablePermits() < claimThreshold) {
              workerFreed.wait(100);
            }
          }
          continue;
        }
        // Only this thread takes permits: at least claimThreshold stay free for this claim.
        dev.outboxrelay.relay.health.StateChangeLog db = database;
        java.time.Instant callStarted = db == null ? null : db.now();
        int statementsBefore = claimStatements.get();
        int claimed = claimOnce();
        if (db != null) {
          lastError.set(null);
          // Only a claim statement that ran is news about the database (with every worker busy,
          // claimOnce returns without one).
          if (claimStatements.get() != statementsBefore) {
            db.success(callStarted);
          }
        } else if (lastError.getAndSet(null) != null) {
          LOG.info("claiming works again");
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
        dev.outboxrelay.relay.health.StateChangeLog db = database;
        if (db != null) {
          lastError.set(message);
          db.failure("claiming failed: " + message);
        } else if (lastError.getAndSet(message) == null) {
          LOG.errorf(e, "claiming failed; retrying with growing pauses (logged again when it recovers)");
        }
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
   * Stops claiming, waits up to {@code grace} for in-flight deliveries, then interrupts the rest
   * (their jobs are released). Returns the number of jobs still in flight at the end (0 normally).
   */
  public int stop(Duration grace) {
    Thread t;
    synchronized (this) {
      running = false;
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
    workers.shutdown();
    try {
      if (!workers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warnf("%d delivery(ies) still running after the %s grace period; interrupting and"
            + " releasing them", inFlight.size(), grace);
        workers.shutdownNow();
        workers.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // A job whose worker never ran (none in normal operation) is released here.
    for (ClaimedMessage m : inFlight.values()) {
      deliverer.release(m);
    }
    deliverer.close();
    return inFlight.size();
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

  public int inFlight() {
    return inFlight.size();
  }

  public int claimStatements() {
    return claimStatements.get();
  }
}
