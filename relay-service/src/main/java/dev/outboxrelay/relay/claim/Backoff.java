package dev.outboxrelay.relay.claim;

import dev.outboxrelay.relay.config.RelayConfig;
import java.time.Duration;
import java.util.Optional;
import java.util.function.DoubleSupplier;

/**
 * Retry delay after a transient failure: {@code initial * multiplier^(attempt-1)}, capped at {@code
 * max}, randomised by ±{@code jitter}. A sink's own hint (Retry-After) wins.
 */
public final class Backoff {
  private final Duration initial;
  private final double multiplier;
  private final Duration max;
  private final double jitter;
  private final DoubleSupplier random;

  public Backoff(
      Duration initial, double multiplier, Duration max, double jitter, DoubleSupplier random) {
    if (initial.isNegative() || initial.isZero()) {
      throw new IllegalArgumentException("outbox.relay.backoff.initial-delay must be positive");
    }
    if (multiplier < 1.0) {
      throw new IllegalArgumentException(
          "outbox.relay.backoff.multiplier must be >= 1, was " + multiplier);
    }
    if (max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("outbox.relay.backoff.max-delay must be >= initial-delay");
    }
    if (jitter < 0 || jitter > 1) {
      throw new IllegalArgumentException(
          "outbox.relay.backoff.jitter must be within 0..1, was " + jitter);
    }
    this.initial = initial;
    this.multiplier = multiplier;
    this.max = max;
    this.jitter = jitter;
    this.random = random;
  }

  public static Backoff fromConfig(RelayConfig.Backoff c) {
    return new Backoff(c.initialDelay(), c.multiplier(), c.maxDelay(), c.jitter(), Math::random);
  }

  /**
   * The next pause of a loop that retries the database or a connection: twice {@code pause}, at
   * most {@code max}.
   */
  public static Duration doubled(Duration pause, Duration max) {
    Duration twice = pause.multipliedBy(2);
    return twice.compareTo(max) > 0 ? max : twice;
  }

  /** Delay before attempt {@code failedAttempt + 1}. */
  public Duration delay(int failedAttempt, Optional<Duration> sinkHint) {
    if (sinkHint.isPresent()) {
      return sinkHint.get();
    }
    double base = initial.toMillis() * Math.pow(multiplier, Math.max(0, failedAttempt - 1));
    double capped = Math.min(base, max.toMillis());
    double factor = 1 + jitter * (2 * random.getAsDouble() - 1);
    return Duration.ofMillis(Math.round(Math.min(capped * factor, max.toMillis())));
  }

  /**
   * The shortest delay this schedule can produce before attempt {@code failedAttempt + 1} (rounded
   * down to the millisecond; a sink's hint is not considered).
   */
  public Duration lowerBound(int failedAttempt) {
    double base = initial.toMillis() * Math.pow(multiplier, Math.max(0, failedAttempt - 1));
    return Duration.ofMillis((long) Math.floor(Math.min(base, max.toMillis()) * (1 - jitter)));
  }

  /** The longest delay this schedule can produce before attempt {@code failedAttempt + 1}. */
  public Duration upperBound(int failedAttempt) {
    double base = initial.toMillis() * Math.pow(multiplier, Math.max(0, failedAttempt - 1));
    return Duration.ofMillis(Math.round(Math.min(base * (1 + jitter), max.toMillis())));
  }
}
