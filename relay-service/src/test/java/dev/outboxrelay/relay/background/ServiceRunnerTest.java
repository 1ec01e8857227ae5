package dev.outboxrelay.relay.background;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.relay.state.StateChangeLog;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The one runner of every background service: schedule, wake-up, back-off, skip while DOWN,
 * reporting.
 */
class ServiceRunnerTest {
  final List<String> lines = new CopyOnWriteArrayList<>();
  final StateChangeLog state =
      new StateChangeLog(
          "dependency",
          (level, line) -> lines.add(line),
          Clock.systemUTC(),
          Duration.ofMinutes(1),
          1);

  @Test
  void aFailedPassIsReportedOnceAndRetriedSoonerThanTheIntervalThenTheStateIsUpAgain() {
    AtomicInteger calls = new AtomicInteger();
    // An hour between passes: only the back-off after a failure (from 100 ms) can bring the
    // retries.
    try (ServiceRunner runner =
        new ServiceRunner(
                "test-runner",
                "working failed",
                () -> {
                  if (calls.incrementAndGet() <= 2) {
                    throw new IllegalStateException("connection refused");
                  }
                  return Pass.done(7);
                },
                state)
            .every(Duration.ofHours(1))
            .firstAfter(Duration.ZERO)
            .start()) {
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> runner.passes() == 3);
      assertEquals(2, runner.failures());
      assertNull(runner.lastError(), "the latest pass worked");
      assertTrue(state.up());
      assertEquals(
          2,
          lines.size(),
          "DOWN once (the second failure is within the reminder interval), UP once: " + lines);
      assertTrue(
          lines.get(0).startsWith("dependency DOWN: working failed: connection refused"),
          lines.get(0));
      assertTrue(lines.get(1).startsWith("dependency UP again"), lines.get(1));
      assertTrue(runner.running());
    }
  }

  @Test
  void wakeStartsTheNextPassAtOnceAndCloseStopsTheThread() {
    AtomicInteger calls = new AtomicInteger();
    ServiceRunner runner =
        new ServiceRunner(
                "test-runner", "working failed", () -> Pass.done(calls.incrementAndGet()), state)
            .every(Duration.ofHours(1))
            .start();
    assertEquals(0, runner.passes(), "the first pass comes after the interval");
    runner.wake();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> runner.passes() == 1);
    runner.wake();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> runner.passes() == 2);
    runner.close();
    assertFalse(runner.running());
    assertEquals(2, calls.get());
  }

  @Test
  void whileTheStateIsDownPassesAreSkippedAndAPassThatAskedNothingIsNoEvidenceOfUp()
      throws Exception {
    state.failure("connection refused");
    AtomicInteger calls = new AtomicInteger();
    ServiceRunner idle =
        new ServiceRunner(
            "test-runner",
            "working failed",
            () -> {
              calls.incrementAndGet();
              return Pass.idle();
            },
            state);
    assertEquals(0, idle.pass().work());
    assertFalse(state.up(), "an idle pass asked nothing");
    try (ServiceRunner skipping =
        new ServiceRunner(
                "test-runner",
                "working failed",
                () -> {
                  calls.incrementAndGet();
                  return Pass.done(1);
                },
                state)
            .every(Duration.ofMillis(10))
            .skipWhileDown()
            .start()) {
      skipping.wake();
      skipping.wake();
      // Nothing to wait for: the skipped passes leave no trace but the count of calls.
      assertEquals(0, skipping.passes());
      state.success();
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> skipping.passes() >= 1);
    }
    assertTrue(calls.get() >= 2);
  }

  @Test
  void aPassCalledDirectlyReportsAndThrowsWhatThePassThrew() {
    ServiceRunner runner =
        new ServiceRunner(
            "test-runner",
            "working failed",
            () -> {
              throw new IllegalStateException("no route to host");
            },
            state);
    assertThrows(IllegalStateException.class, runner::pass);
    assertFalse(state.up());
    assertEquals("no route to host", runner.lastError());
    assertThrows(IllegalArgumentException.class, () -> runner.every(Duration.ofSeconds(-1)));
  }
}
