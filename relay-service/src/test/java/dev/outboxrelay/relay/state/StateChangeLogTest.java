package dev.outboxrelay.relay.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StateChangeLogTest {
  private final List<String> lines = new ArrayList<>();
  private Instant now = Instant.parse("2026-01-01T00:00:00Z");

  private StateChangeLog log(int failuresToDown) {
    Clock clock =
        new Clock() {
          @Override
          public ZoneOffset getZone() {
            return ZoneOffset.UTC;
          }

          @Override
          public Clock withZone(java.time.ZoneId zone) {
            return this;
          }

          @Override
          public Instant instant() {
            return now;
          }
        };
    return new StateChangeLog(
        "source 'pg' database",
        (level, line) -> lines.add(level + " " + line),
        clock,
        Duration.ofMinutes(1),
        failuresToDown);
  }

  private void advance(Duration d) {
    now = now.plus(d);
  }

  @Test
  void anOutageOfManyFailedPollsLogsOneDownLineRemindersAndOneUpLine() {
    StateChangeLog s = log(1);
    s.success();
    assertEquals(List.of(), lines, "UP while UP logs nothing");
    // A claim loop polling every 100ms for 150s: 1,500 failures.
    for (int i = 0; i < 1500; i++) {
      s.failure("Connection refused");
      advance(Duration.ofMillis(100));
    }
    assertFalse(s.up());
    assertEquals(0.0, s.upValue());
    assertEquals("Connection refused", s.status().reason());
    assertEquals(1500, s.status().failures());
    s.success();
    s.success();
    assertEquals(
        List.of(
            "WARN source 'pg' database DOWN: Connection refused (logged again when UP, reminder every 1m00s while DOWN)",
            "WARN source 'pg' database still DOWN after 1m00s (601 failed call(s)): Connection refused",
            "WARN source 'pg' database still DOWN after 2m00s (1201 failed call(s)): Connection refused",
            "INFO source 'pg' database UP again after 2m30s DOWN (1500 failed call(s) meanwhile; last: Connection refused)"),
        lines);
    assertTrue(s.up());
    assertEquals(1.0, s.upValue());
    assertEquals(null, s.status().reason());
  }

  @Test
  void aSinkIsDownOnlyAfterConsecutiveFailures() {
    StateChangeLog s = log(3);
    s.failure("503");
    s.failure("503");
    s.success(); // the streak is broken
    s.failure("503");
    s.failure("503");
    assertTrue(s.up(), "two failures in a row are not an outage");
    assertEquals(List.of(), lines);
    s.failure("connect timed out");
    assertFalse(s.up());
    assertEquals(
        List.of(
            "WARN source 'pg' database DOWN: connect timed out (logged again when UP, reminder"
                + " every 1m00s while DOWN)"),
        lines);
    advance(Duration.ofSeconds(2));
    s.success();
    assertEquals(
        "INFO source 'pg' database UP again after 2.0s DOWN (3 failed call(s) meanwhile; last:"
            + " connect timed out)",
        lines.get(1));
  }

  @Test
  void flappingLogsEachChangeButNoReminderBeforeTheInterval() {
    StateChangeLog s = log(1);
    s.failure(null);
    advance(Duration.ofSeconds(59));
    s.failure("again");
    assertEquals(1, lines.size(), "no reminder before a minute: " + lines);
    assertTrue(lines.get(0).contains("DOWN: (no message)"), lines.get(0));
    s.success();
    s.failure("x");
    assertEquals(3, lines.size());
  }

  /**
   * Regression: a claim that started before the kill and returned after it logged DOWN, UP, DOWN.
   */
  @Test
  void aCallThatStartedBeforeTheOutageIsNoEvidenceOfRecovery() {
    StateChangeLog s = log(1);
    Instant claimStarted = s.now();
    advance(Duration.ofMillis(3));
    s.failure("I/O error"); // another thread noticed the outage
    advance(Duration.ofMillis(1));
    s.success(
        claimStarted); // the claim started before it, and finished on a connection not yet broken
    assertFalse(s.up(), "still DOWN");
    Instant laterCall = s.now();
    advance(Duration.ofSeconds(5));
    s.success(laterCall);
    assertTrue(s.up());
    assertEquals(2, lines.size(), "one DOWN, one UP: " + lines);
  }

  @Test
  void refusesNonsense() {
    assertThrows(IllegalArgumentException.class, () -> log(0));
    assertThrows(
        IllegalArgumentException.class,
        () -> new StateChangeLog("x", (l, m) -> {}, Clock.systemUTC(), Duration.ZERO, 1));
    assertEquals("850ms", StateChangeLog.human(Duration.ofMillis(850)));
    assertEquals("2h03m", StateChangeLog.human(Duration.ofMinutes(123)));
  }
}
