package dev.outboxrelay.relay.config;

import java.time.Duration;

/**
 * Start-up checks of configured values that {@code @ConfigMapping} cannot express. A bad value
 * fails start-up with a message naming its key.
 */
public final class ConfigChecks {
  private ConfigChecks() {}

  /** {@code value}, or an error naming {@code key} when it is zero or negative. */
  public static Duration positive(String key, Duration value) {
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(key + " must be positive, was " + value);
    }
    return value;
  }

  /** {@code value}, or an error naming {@code key} when it is zero or negative. */
  public static int positive(String key, int value) {
    if (value <= 0) {
      throw new IllegalArgumentException(key + " must be positive, was " + value);
    }
    return value;
  }
}
