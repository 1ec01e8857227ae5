package dev.outboxrelay.relay.background;

import dev.outboxrelay.relay.state.StateChangeLog;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs a {@link BackgroundService} on a thread of its own: a pass, a wait, a pass. It owns what
 * every background service used to do for itself:
 *
 * <ul>
 *   <li>the schedule: the next pass starts {@link #every interval} after the previous one ended (or
 *       when the pass's {@link Pass#next()} says), the first after {@link #firstAfter}; {@link
 *       #wake()} ends a wait early;
 *   <li>the back-off: after a failed pass the next one comes after a pause that starts at {@link
 *       #ERROR_MIN} and doubles up to {@link #backingOffTo} (default: the interval), back to the
 *       interval after a pass that worked;
 *   <li>"skip while DOWN" ({@link #skipWhileDown()}): no pass while the state says DOWN (someone
 *       else, the claim loop or the gauges, finds out when it is UP again);
 *   <li>reporting: every pass that answered is a success of the state, every failure a failure (one
 *       line per state change, never a stack trace). The state is never null: without a source,
 *       {@link StateChangeLog#logging} logs.
 * </ul>
 *
 * {@link #close()} stops it: the current wait ends at once, a running pass is waited for (a
 * database call is not interrupted) up to {@link #STOP_WAIT}, then interrupted.
 */
public final class ServiceRunner implements AutoCloseable {
  /** First pause after a failed pass. */
  public static final Duration ERROR_MIN = Duration.ofMillis(100);

  /** How long {@link #close()} waits for a running pass before interrupting it. */
  static final Duration STOP_WAIT = Duration.ofSeconds(2);

  private final String threadName;
  private final String what;
  private final BackgroundService service;
  private final StateChangeLog state;
  private final Object lock = new Object();
  private Duration interval = Duration.ofSeconds(1);
  private Duration firstAfter;
  private Duration errorMax;
  private boolean skipWhileDown;
  private boolean woken;
  private volatile boolean running;
  private volatile String lastError;
  private final AtomicLong passes = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private Thread thread;

  /**
   * @param threadName the thread's name ({@code outbox-lease-heartbeat-orders})
   * @param what how a failure line starts ({@code renewing leases failed}), before the error
   * @param state the dependency's state, told of every pass
   */
  public ServiceRunner(
      String threadName, String what, BackgroundService service, StateChangeLog state) {
    this.threadName = Objects.requireNonNull(threadName, "threadName");
    this.what = Objects.requireNonNull(what, "what");
    this.service = Objects.requireNonNull(service, "service");
    this.state = Objects.requireNonNull(state, "state");
  }

  /** Time from the end of a pass to the start of the next (zero: at once). */
  public ServiceRunner every(Duration interval) {
    if (interval.isNegative()) {
      throw new IllegalArgumentException(
          threadName + ": interval must not be negative, was " + interval);
    }
    this.interval = interval;
    return this;
  }

  /** Delay before the first pass (default: the interval). */
  public ServiceRunner firstAfter(Duration delay) {
    this.firstAfter = delay;
    return this;
  }

  /** Longest pause between failed passes (default: the interval). */
  public ServiceRunner backingOffTo(Duration max) {
    this.errorMax = max;
    return this;
  }

  /** No pass while the state is DOWN. */
  public ServiceRunner skipWhileDown() {
    this.skipWhileDown = true;
    return this;
  }

  public ServiceRunner start() {
    synchronized (lock) {
      if (running) {
        return this;
      }
      running = true;
      thread = new Thread(this::loop, threadName);
      thread.setDaemon(true);
      thread.start();
    }
    return this;
  }

  private void loop() {
    Duration wait = firstAfter != null ? firstAfter : interval;
    Duration errorPause = ERROR_MIN;
    while (awaitNext(wait)) {
      if (skipWhileDown && !state.up()) {
        wait = interval;
        continue;
      }
      try {
        Pass p = pass();
        errorPause = ERROR_MIN;
        wait = p.next() != null ? p.next() : interval;
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        if (!running) {
          return;
        }
        wait = errorPause;
        Duration max = errorMax != null ? errorMax : interval;
        errorPause =
            errorPause.multipliedBy(2).compareTo(max) > 0 ? max : errorPause.multipliedBy(2);
      }
    }
  }

  /**
   * Runs one pass now, on the caller's thread, reporting it to the state as the runner's own passes
   * are (what a test or an operator's request calls). Throws what the pass threw.
   */
  public Pass pass() throws Exception {
    Instant callStarted = state.now();
    try {
      Pass p = service.runOnce();
      lastError = null;
      if (p.answered()) {
        state.success(callStarted);
      }
      return p;
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      failures.incrementAndGet();
      lastError = StateChangeLog.describe(e);
      if (running || thread == null) {
        state.failure(what + ": " + lastError);
      }
      throw e;
    } finally {
      passes.incrementAndGet();
    }
  }

  /** Waits {@code wait} or until woken or stopped; false when stopped. */
  private boolean awaitNext(Duration wait) {
    synchronized (lock) {
      long until = System.nanoTime() + wait.toNanos();
      try {
        for (long left = wait.toNanos();
            running && !woken && left > 0;
            left = until - System.nanoTime()) {
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        }
      } catch (InterruptedException e) {
        return false;
      }
      woken = false;
      return running;
    }
  }

  /** Ends the current wait: the next pass starts now (or as soon as the current one ended). */
  public void wake() {
    synchronized (lock) {
      woken = true;
      lock.notifyAll();
    }
  }

  /** Passes run so far, failed ones included (a test waits on it). */
  public long passes() {
    return passes.get();
  }

  /** Passes that failed so far. */
  public long failures() {
    return failures.get();
  }

  /** The latest pass's failure, or null when it worked. */
  public String lastError() {
    return lastError;
  }

  /** True from {@link #start()} until {@link #close()} or until its thread ended. */
  public boolean running() {
    Thread t = thread;
    return running && t != null && t.isAlive();
  }

  @Override
  public void close() {
    Thread t;
    synchronized (lock) {
      running = false;
      lock.notifyAll();
      t = thread;
    }
    if (t == null || t == Thread.currentThread()) {
      return;
    }
    try {
      t.join(STOP_WAIT.toMillis());
      if (t.isAlive()) {
        t.interrupt();
        t.join(STOP_WAIT.toMillis());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
