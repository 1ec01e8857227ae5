package dev.outboxrelay.relay.background;

import java.time.Duration;

/**
 * What one pass of a {@link BackgroundService} did.
 *
 * @param work what it did, in the service's unit (claims found lost, rows reaped, jobs deleted,
 *     notifications received); 0 for nothing
 * @param answered the pass called its dependency and got an answer: reported as a success to the
 *     dependency's state. False for a pass that had nothing to ask (no claims to renew).
 * @param next when the next pass is due; null: after the runner's interval
 */
public record Pass(long work, boolean answered, Duration next) {
  /** Nothing to do, nothing asked. */
  public static Pass idle() {
    return new Pass(0, false, null);
  }

  /** The dependency answered; {@code work} done. */
  public static Pass done(long work) {
    return new Pass(work, true, null);
  }

  /** This pass, with the next one due after {@code next} instead of the runner's interval. */
  public Pass nextAfter(Duration next) {
    return new Pass(work, answered, next);
  }
}
