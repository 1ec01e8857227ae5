package dev.outboxrelay.relay.claim;

import java.time.Duration;

/**
 * The wait after an empty claim: starts at {@code min}, doubles per empty claim, capped at {@code max}.
 * The claim loop's runner waits it out; {@link ClaimLoop#wake()} ends it early (a database
 * notification that jobs were committed), and a wake-up while no one waits is kept for the next
 * wait, so none is lost between an empty claim and the wait that follows it. Used by the claim
 * loop's pass only (one thread).
 */
public final class IdleWait {
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
}
