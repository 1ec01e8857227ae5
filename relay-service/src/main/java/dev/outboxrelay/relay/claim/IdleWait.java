package dev.outboxrelay.relay.claim;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The wait after an empty claim: starts at {@code min}, doubles per empty claim, capped at {@code
 * max}. {@link #wake()} ends the current wait early (e.g. a database notification that jobs were
 * committed); a wake-up while no one waits is kept for the next wait, so none is lost between an
 * empty claim and the wait that follows it.
 */
public final class IdleWait {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition woken = lock.newCondition();
  private boolean wakePending;
  private final Duration min;
  private final Duration max;
  private Duration next;

  public IdleWait(Duration min, Duration max) {
    if (min.isNegative() || min.isZero() || max.compareTo(min) < 0) {
      throw new IllegalArgumentException(
          "outbox.relay.idle-min-wait must be positive and <= outbox.relay.idle-max-wait");
    }
    this.min = min;
    this.max = max;
    this.next = min;
  }

  /** The wait to apply now; the following one doubles. */
  public Duration nextWait() {
    Duration d = next;
    Duration doubled = next.multipliedBy(2);
    next = doubled.compareTo(max) > 0 ? max : doubled;
    return d;
  }

  /** Work was found: the next empty claim waits {@code min} again. */
  public void reset() {
    next = min;
  }

  /**
   * Waits {@code d}, or less when {@link #wake()} is called meanwhile (or was called since the last
   * wait). Returns true when woken, false when the whole wait elapsed.
   */
  public boolean await(Duration d) throws InterruptedException {
    long nanos = d.toNanos();
    lock.lockInterruptibly();
    try {
      while (!wakePending) {
        if (nanos <= 0) {
          return false;
        }
        nanos = woken.awaitNanos(nanos);
      }
      wakePending = false;
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Ends the current (or the next) {@link #await} now. Safe from any thread. */
  public void wake() {
    lock.lock();
    try {
      wakePending = true;
      woken.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
