package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.lease.LeaseHeartbeat;
import dev.outboxrelay.relay.state.StateChangeLog;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToIntFunction;
import org.jboss.logging.Logger;

/**
 * Claims jobs and keeps the sends fed: a claim runs while the jobs of the last one are being sent,
 * so a place that frees finds its next job waiting instead of waiting for a claim.
 *
 * <p>Sends hold no thread: a worker starts a send ({@link Deliverer.Attempt#start}) and goes on;
 * the sink's answer is recorded on a worker when it comes. Places: at most {@code concurrency}
 * sends in flight, and at most {@code destinationConcurrency(d)} of them to one destination {@code
 * d}, so a slow destination takes only its share and the other destinations' jobs are started past
 * its waiting ones. Back-pressure: claimed jobs that could start wait at most one batch beyond the
 * free places, and the claims held (queued, sending, or waiting for their completion batch) never
 * exceed {@code 2 x (concurrency + batchSize)}, so memory is bounded whatever the backlog. Both
 * bounds hold with two claimers, this loop and a completion's key-affine hand-over ({@link
 * CompletionBatcher#handingOverTo}): each reserves its room ({@link #reserve}, {@link
 * #reserveHandOver}) before its statement runs, and the jobs it claimed take the reservation's
 * place ({@link #offer}). Every claim held is renewed by the source's {@link LeaseHeartbeat}, and a
 * job is sent only while its claim surely has a third of its lease left ({@link Deliverer}). A
 * claim asks for what there is room for, up to a batch: it runs at once when a place would
 * otherwise be idle (no queued job can start and a place is free), else once half a batch of room
 * has freed, so under load a claim statement moves many jobs. A send whose answer was handled wakes
 * the loop; a finished job with an ordering key also ends an idle wait when this loop holds no
 * other job of its key, because the key's next job has just become claimable.
 *
 * <p>Ordering keys: a key's jobs held here (its run, handed over by a completion, {@link
 * #runningKeys}) are sent one after the other, each once the one before it was answered delivered;
 * a job that was not (a retry, a dead job, a lost or given-back claim) takes the key's queued jobs
 * back with it, released unsent, so none goes before it (docs/design.md "Ordering keys").
 *
 * <p>Idle: an empty claim waits a bounded, growing interval ({@link IdleWait}), cut short by {@link
 * #wake()}. Errors: logged once per state change, with a growing pause; the loop never dies.
 * Shutdown ({@link #stop}): stop claiming, give the queued jobs back, let in-flight sends finish
 * within the grace period, then stop waiting for them; given-back and abandoned jobs are released
 * to ready without counting an attempt.
 */
public class ClaimLoop {
  private static final Logger LOG = Logger.getLogger(ClaimLoop.class);
  private static final Duration ERROR_PAUSE_MAX = Duration.ofSeconds(5);

  /**
   * Worker threads at most: they start sends and record answers (a database transaction for a retry
   * or a dead job), never wait for a sink.
   */
  static final int MAX_WORKER_THREADS = 16;

  /**
   * The worker threads of a loop of {@code concurrency} places: one per place, at most {@value
   * #MAX_WORKER_THREADS}. Only they take a connection for a delivery (a by-reference body, a retry
   * or a dead job); a send in flight holds none.
   */
  public static int workerThreads(int concurrency) {
    return Math.min(concurrency, MAX_WORKER_THREADS);
  }

  /** Default of {@code outbox.relay.key-run-length}. */
  public static final int DEFAULT_KEY_RUN_LENGTH = 16;

  private final OutboxStore store;
  private final Deliverer deliverer;
  private final LeaseHeartbeat heartbeat;
  private final int batchSize;
  private final int concurrency;
  private final Duration lease;
  private final IdleWait idle;

  /** Guards the queue and the places below; notified each time room for a claim frees. */
  private final Object lock = new Object();

  /** Claimed jobs not started yet, in claim (id) order. */
  private final Deque<LeaseHeartbeat.Claim> queue = new ArrayDeque<>();

  /**
   * Ordering keys with a send started and not answered: their queued jobs wait (a key's jobs go one
   * after the other, docs/design.md "Ordering keys"). Guarded by the lock.
   */
  private final Set<String> sendingKeys = new HashSet<>();

  /** Claims held per ordering key (queued, sending or recording). Guarded by the lock. */
  private final Map<String, Integer> heldByKey = new HashMap<>();

  /** Jobs of one key a completion's hand-over claims at most ({@link #runningKeys}). */
  private volatile int keyRunLength = DEFAULT_KEY_RUN_LENGTH;

  /** Sends started whose answer is not handled yet, by job id. */
  private final Map<Long, Deliverer.Attempt> sending = new HashMap<>();

  private final Map<String, Integer> sendingByDestination = new HashMap<>();
  private volatile ToIntFunction<String> destinationConcurrency;
  private final ThreadPoolExecutor workers;

  /** Every claim held: queued, sending, or waiting for its completion. */
  private final Map<Long, LeaseHeartbeat.Claim> inFlight = new ConcurrentHashMap<>();

  /**
   * Room promised to claim statements still running (this loop's claim, a completion's hand-over),
   * counted as held until their jobs are: two claimers never both spend the same room. Guarded by
   * the lock.
   */
  private int reserved;

  /** The most claims ever held plus reserved at once (never above {@link #maxHeld()}). */
  private int heldPeak;

  private final AtomicInteger claimStatements = new AtomicInteger();
  private final AtomicReference<String> lastError = new AtomicReference<>();
  private volatile boolean running;
  private volatile boolean stopping;
  private Thread thread;

  /** Where claim errors and recoveries go (logged once per state change). */
  private volatile StateChangeLog database =
      StateChangeLog.logging("the claim loop's database", LOG);

  private volatile Duration errorPauseMax = ERROR_PAUSE_MAX;

  /**
   * The source named in thread names ({@code outbox-worker-<source>-3}); null for a single source.
   */
  private volatile String source;

  public ClaimLoop(
      OutboxStore store,
      Deliverer deliverer,
      LeaseHeartbeat heartbeat,
      int batchSize,
      int concurrency,
      Duration lease,
      IdleWait idle) {
    if (batchSize <= 0) {
      throw new IllegalArgumentException(
          "outbox.relay.batch-size must be positive, was " + batchSize);
    }
    if (concurrency <= 0) {
      throw new IllegalArgumentException(
          "outbox.relay.concurrency must be positive, was " + concurrency);
    }
    this.store = store;
    this.deliverer = deliverer;
    this.heartbeat = heartbeat;
    this.batchSize = batchSize;
    this.concurrency = concurrency;
    this.lease = lease;
    this.idle = idle;
    this.destinationConcurrency = d -> concurrency;
    AtomicInteger n = new AtomicInteger();
    int threads = workerThreads(concurrency);
    // Answers arriving after stop() abandoned their jobs find the pool shut down: dropped, they
    // were released already (and must not throw into a sink's own thread).
    this.workers =
        new ThreadPoolExecutor(
            threads,
            threads,
            0,
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t =
                  new Thread(
                      r,
                      "outbox-worker-"
                          + (source == null ? "" : source + "-")
                          + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            },
            new ThreadPoolExecutor.DiscardPolicy());
  }

  /**
   * Bounds the sends in flight to each destination: {@code limit} of a destination's name (at least
   * 1; values above concurrency mean concurrency). Default: no bound beyond concurrency. Call
   * before {@link #start()}.
   */
  public ClaimLoop limitingDestinations(ToIntFunction<String> limit) {
    this.destinationConcurrency = limit;
    return this;
  }

  /**
   * Lets a completion's key-affine hand-over claim up to {@code runLength} jobs of a key at once
   * (the key's run, {@link CompletionBatcher}): they are sent one after the other, each once the
   * one before it was answered delivered, and given back unsent when it was not. 1: only the key's
   * next job. Call before {@link #start()}.
   */
  public ClaimLoop runningKeys(int runLength) {
    if (runLength < 1) {
      throw new IllegalArgumentException(
          "outbox.relay.key-run-length must be at least 1, was " + runLength);
    }
    this.keyRunLength = runLength;
    return this;
  }

  /** Jobs of one key a hand-over claims at most. */
  int keyRunLength() {
    return keyRunLength;
  }

  /**
   * {@code outbox.relay.destination-concurrency} as configured, else concurrency for a relay with
   * one destination and half of it (at least 1) for more.
   */
  public static int destinationConcurrency(
      OptionalInt configured, int concurrency, int destinations) {
    if (configured.isPresent()) {
      if (configured.getAsInt() < 1) {
        throw new IllegalArgumentException(
            "outbox.relay.destination-concurrency must be at least 1, was "
                + configured.getAsInt());
      }
      return configured.getAsInt();
    }
    return destinations <= 1 ? concurrency : Math.max(1, concurrency / 2);
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

  /**
   * Free places of {@code destination} (may be negative after its limit was lowered). Holding the
   * lock.
   */
  private int freePlaces(String destination) {
    return destinationConcurrency.applyAsInt(destination)
        - sendingByDestination.getOrDefault(destination, 0);
  }

  /**
   * Queued jobs that could start now: each destination's within its free places, and of each
   * ordering key only the first, when no job of the key is sending. Holding the lock.
   */
  private int startable() {
    if (queue.isEmpty()) {
      return 0;
    }
    Map<String, Integer> places = new HashMap<>();
    Set<String> keys = new HashSet<>();
    int n = 0;
    for (LeaseHeartbeat.Claim c : queue) {
      String key = c.message().orderingKey();
      if (key != null && (sendingKeys.contains(key) || !keys.add(key))) {
        continue;
      }
      String d = c.message().destination();
      int free = places.computeIfAbsent(d, this::freePlaces);
      if (free > 0) {
        places.put(d, free - 1);
        n++;
      }
    }
    return n;
  }

  /**
   * Queued jobs that wait behind a job of their key being sent: they are sent as soon as it is
   * answered, so a completion batch that waits for every job in flight waits for them too.
   */
  public int queuedBehindTheirKey() {
    synchronized (lock) {
      if (sendingKeys.isEmpty()) {
        return 0;
      }
      int n = 0;
      for (LeaseHeartbeat.Claim c : queue) {
        String key = c.message().orderingKey();
        if (key != null && sendingKeys.contains(key)) {
          n++;
        }
      }
      return n;
    }
  }

  /** Claims this loop holds of {@code key}: queued, sending, or waiting for their completion. */
  int heldOfKey(String key) {
    synchronized (lock) {
      return heldByKey.getOrDefault(key, 0);
    }
  }

  /**
   * How many jobs a claim may ask for now: free places plus one batch ahead, less what is queued
   * (while places are free, a queued job waiting for its saturated destination leaves room: the
   * places are for the other destinations), within the hold limit.
   */
  int room() {
    synchronized (lock) {
      return room(startable());
    }
  }

  private int room(int startable) {
    if (stopping) {
      return 0;
    }
    // Reserved jobs count as queued jobs that could start, and as held.
    int unsent =
        sending.size() + reserved + (sending.size() >= concurrency ? queue.size() : startable);
    return Math.max(
        0,
        Math.min(
            batchSize,
            Math.min(concurrency + batchSize - unsent, maxHeld() - inFlight.size() - reserved)));
  }

  /** The claims held at most: {@code 2 x (concurrency + batchSize)}. */
  int maxHeld() {
    return 2 * (concurrency + batchSize);
  }

  /**
   * Reserves room for a claim statement about to run: at most {@code wanted} and at most the {@link
   * #room()}; the caller hands the jobs it claimed to {@link #offer} with the number reserved, or
   * gives the reservation back with {@link #unreserve} when the statement failed.
   */
  int reserve(int wanted) {
    synchronized (lock) {
      int n = Math.max(0, Math.min(wanted, room(startable())));
      reserved += n;
      heldPeak = Math.max(heldPeak, inFlight.size() + reserved);
      return n;
    }
  }

  /**
   * Reserves room for a completion's key-affine hand-over: at most {@code wanted}, within the hold
   * limit only, not the claim's one batch ahead: a key's run waits in the queue behind its key's
   * send and takes no place; the caller goes on as after {@link #reserve}.
   */
  int reserveHandOver(int wanted) {
    synchronized (lock) {
      int n = stopping ? 0 : Math.max(0, Math.min(wanted, maxHeld() - inFlight.size() - reserved));
      reserved += n;
      heldPeak = Math.max(heldPeak, inFlight.size() + reserved);
      return n;
    }
  }

  /** Gives back room reserved for a claim statement that claimed nothing (it failed). */
  void unreserve(int n) {
    synchronized (lock) {
      reserved -= n;
      lock.notifyAll();
    }
  }

  /** A claim is worth a statement now: a place would be idle without it, or half a batch fits. */
  private boolean claimDue() {
    int startable = startable();
    int room = room(startable);
    return room > 0
        && ((startable == 0 && sending.size() < concurrency) || room >= Math.max(1, batchSize / 2));
  }

  /**
   * One pass: claims as many jobs as there is {@link #room()} for (up to a batch) and starts what
   * may start. Returns the number claimed (0 when nothing was ready or there was no room).
   */
  public int claimOnce() {
    int wanted = reserve(batchSize);
    if (wanted == 0) {
      return 0;
    }
    claimStatements.incrementAndGet();
    long started = System.nanoTime();
    List<ClaimedJob> claimed;
    try {
      claimed = store.claimBatch(ClaimRequest.of(wanted, lease));
    } catch (RuntimeException e) {
      unreserve(wanted);
      throw e;
    }
    if (claimed.size() > wanted) {
      unreserve(wanted);
      // Impossible by the claim contract; the extra leases expire and the reaper re-offers them.
      throw new IllegalStateException(
          "claim returned "
              + claimed.size()
              + " jobs for a limit of "
              + wanted
              + " (ids "
              + claimed.get(0).id()
              + ".."
              + claimed.get(claimed.size() - 1).id()
              + ")");
    }
    offer(claimed, started, wanted);
    return claimed.size();
  }

  /**
   * Holds and queues jobs claimed for this loop, within room {@link #reserve reserved} for them
   * ({@code reservedFor}, at least their number), by a statement that started at {@code
   * claimStartedNanos}: a claim's, or a completion's key-affine hand-over ({@link
   * CompletionBatcher}). The reservation ends here.
   */
  void offer(List<ClaimedJob> claimed, long claimStartedNanos, int reservedFor) {
    if (claimed.size() > reservedFor) {
      unreserve(reservedFor);
      claimed.forEach(deliverer::release);
      throw new IllegalStateException(
          claimed.size() + " jobs offered for " + reservedFor + " reserved places");
    }
    if (!hold(claimed, claimStartedNanos, reservedFor)) {
      claimed.forEach(deliverer::release); // claimed after shutdown began: never sent
    }
  }

  /**
   * Holds claimed jobs in place of their reservation (the heartbeat renews them from now), queues
   * them and starts what may start; false (nothing held) once shutdown began. Under the lock, so
   * that {@link #stop} either gives the jobs back with the queue or they are never queued.
   */
  private boolean hold(List<ClaimedJob> claimed, long claimStartedNanos, int reservedFor) {
    synchronized (lock) {
      reserved -= reservedFor;
      if (stopping) {
        lock.notifyAll();
        return false;
      }
      for (ClaimedJob m : claimed) {
        LeaseHeartbeat.Claim c = heartbeat.hold(m, claimStartedNanos);
        inFlight.put(m.id(), c);
        queue.add(c);
        if (m.orderingKey() != null) {
          heldByKey.merge(m.orderingKey(), 1, Integer::sum);
        }
      }
      heldPeak = Math.max(heldPeak, inFlight.size() + reserved);
      if (claimed.size() < reservedFor) {
        lock.notifyAll(); // room that was reserved and not used is free again
      }
    }
    startWhatMay();
    return true;
  }

  /**
   * Starts queued jobs, in claim order, while places are free: a job whose destination has no free
   * place, or whose key has a job sending, stays queued and the jobs behind it go first.
   */
  private void startWhatMay() {
    List<Deliverer.Attempt> starting = new ArrayList<>();
    synchronized (lock) {
      if (stopping) {
        return;
      }
      for (Iterator<LeaseHeartbeat.Claim> it = queue.iterator();
          it.hasNext() && sending.size() < concurrency; ) {
        LeaseHeartbeat.Claim c = it.next();
        String d = c.message().destination();
        String key = c.message().orderingKey();
        if (freePlaces(d) <= 0 || (key != null && sendingKeys.contains(key))) {
          continue;
        }
        it.remove();
        sendingByDestination.merge(d, 1, Integer::sum);
        if (key != null) {
          sendingKeys.add(key);
        }
        Deliverer.Attempt a =
            deliverer.attempt(c, workers, delivered -> answered(c, delivered), () -> finished(c));
        sending.put(c.message().id(), a);
        starting.add(a);
      }
    }
    for (Deliverer.Attempt a : starting) {
      workers.execute(
          () -> {
            try {
              a.start();
            } catch (RuntimeException e) {
              LOG.errorf(
                  e,
                  "message_id=%d: delivery failed unexpectedly; the lease expires and the reaper"
                      + " re-offers it",
                  a.claim().message().id());
              answered(a.claim(), false);
              finished(a.claim());
            }
          });
    }
  }

  /**
   * The send's answer is handled (or the job was given back): its place is free, and its key's next
   * queued job may go. When it was not {@code delivered}, the key's queued jobs (the rest of its
   * run) are given back unsent: none may go before this one, which is to be retried, is dead, or
   * was lost.
   */
  private void answered(LeaseHeartbeat.Claim c, boolean delivered) {
    String key = c.message().orderingKey();
    List<LeaseHeartbeat.Claim> givenBack = new ArrayList<>();
    synchronized (lock) {
      if (sending.remove(c.message().id()) != null) {
        sendingByDestination.computeIfPresent(
            c.message().destination(), (k, v) -> v == 1 ? null : v - 1);
        if (key != null) {
          sendingKeys.remove(key);
        }
      }
      if (key != null && !delivered) {
        for (Iterator<LeaseHeartbeat.Claim> it = queue.iterator(); it.hasNext(); ) {
          LeaseHeartbeat.Claim q = it.next();
          if (key.equals(q.message().orderingKey())) {
            it.remove();
            givenBack.add(q);
          }
        }
      }
      lock.notifyAll();
    }
    for (LeaseHeartbeat.Claim q : givenBack) {
      deliverer.release(q.message());
      finished(q);
    }
    startWhatMay();
  }

  /** The claim's outcome is recorded (or it was given back): it is no longer held. */
  private void finished(LeaseHeartbeat.Claim c) {
    heartbeat.forget(c);
    String key = c.message().orderingKey();
    boolean keyLeft = false;
    synchronized (lock) {
      if (inFlight.remove(c.message().id(), c) && key != null) {
        keyLeft = heldByKey.merge(key, -1, Integer::sum) <= 0;
        if (keyLeft) {
          heldByKey.remove(key);
        }
      }
      lock.notifyAll();
    }
    if (keyLeft) {
      // Its key's next job has just become claimable (this relay holds none of the key's jobs).
      idle.wake();
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
        synchronized (lock) {
          if (!claimDue()) {
            // No room, or a claim would move too few jobs: wait for room instead of polling the
            // database.
            lock.wait(100);
            continue;
          }
        }
        StateChangeLog db = database;
        Instant callStarted = db.now();
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
        String message =
            String.valueOf(e.getCause() != null ? e.getCause().getMessage() : e.getMessage());
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
   * Stops claiming, gives the queued jobs back (never sent), waits up to {@code grace} for the
   * sends in flight to be answered, then stops waiting for the rest (their jobs are released, a
   * later answer is ignored), records the completions still pending and stops the heartbeat.
   * Returns the number of sends abandoned and released unanswered (0 normally).
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
    List<LeaseHeartbeat.Claim> queued;
    synchronized (lock) {
      queued = new ArrayList<>(queue);
      queue.clear();
    }
    for (LeaseHeartbeat.Claim c : queued) {
      deliverer.release(c.message());
      finished(c);
    }
    if (!queued.isEmpty()) {
      LOG.infof("gave back %d claimed job(s) that were not started", queued.size());
    }
    long deadline = System.nanoTime() + grace.toNanos();
    List<Deliverer.Attempt> unanswered;
    synchronized (lock) {
      try {
        for (long left; !sending.isEmpty() && (left = deadline - System.nanoTime()) > 0; ) {
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      unanswered = new ArrayList<>(sending.values());
    }
    int released = 0;
    if (!unanswered.isEmpty()) {
      LOG.warnf(
          "%d delivery(ies) still unanswered after the %s grace period; releasing them",
          unanswered.size(), grace);
      for (Deliverer.Attempt a : unanswered) {
        if (a.abandon()) {
          released++;
        }
      }
    }
    workers.shutdown();
    try {
      // Answers being recorded now get their transaction.
      workers.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    deliverer.close();
    heartbeat.close();
    return released;
  }

  /**
   * Claims now if the loop is waiting idle (or at its next idle wait): jobs were committed. Safe
   * from any thread; costs at most one claim statement when nothing turns out to be ready.
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

  /** Room reserved for claim statements still running. */
  int reserved() {
    synchronized (lock) {
      return reserved;
    }
  }

  /** The most claims held at once, room reserved for running claim statements included. */
  int heldPeak() {
    synchronized (lock) {
      return heldPeak;
    }
  }

  /** Claims started and not yet recorded: sending, or waiting for their completion. */
  public int sendingOrRecording() {
    synchronized (lock) {
      return inFlight.size() - queue.size();
    }
  }

  public int claimStatements() {
    return claimStatements.get();
  }
}
