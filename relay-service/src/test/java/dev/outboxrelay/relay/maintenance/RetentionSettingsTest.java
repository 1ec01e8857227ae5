package dev.outboxrelay.relay.maintenance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Start-up validation of {@code outbox.retention.*}: each bad value names its key. */
class RetentionSettingsTest {
  private static final Duration DAY = Duration.ofDays(1);
  private static final Duration TEN_MINUTES = Duration.ofMinutes(10);

  @Test
  void acceptsTheDefaults() {
    RetentionSettings s = RetentionSettings.of(true, Duration.ofDays(7), TEN_MINUTES, 500, 100_000);
    assertEquals(500, s.batchSize());
    assertEquals(Duration.ofDays(7), s.keep());
  }

  @Test
  void rejectsBadValuesNamingTheKey() {
    assertKey(
        "outbox.retention.keep",
        () -> RetentionSettings.of(true, Duration.ZERO, TEN_MINUTES, 500, 1000));
    assertKey(
        "outbox.retention.interval",
        () -> RetentionSettings.of(true, DAY, Duration.ofSeconds(-1), 500, 1000));
    assertKey(
        "outbox.retention.batch-size", () -> RetentionSettings.of(true, DAY, TEN_MINUTES, 0, 1000));
    assertKey(
        "outbox.retention.batch-size",
        () -> RetentionSettings.of(true, DAY, TEN_MINUTES, 5001, 10_000));
    assertKey(
        "outbox.retention.max-per-pass",
        () -> RetentionSettings.of(true, DAY, TEN_MINUTES, 500, 499));
  }

  private static void assertKey(String key, Runnable settings) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, settings::run);
    assertTrue(e.getMessage().startsWith(key + " "), e.getMessage());
  }
}
