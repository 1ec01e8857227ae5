package dev.outboxrelay.relay.testing;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;

/** Awaitility waits that keep polling through errors (a database or broker that is restarting). */
public final class Conditions {
  private Conditions() {}

  /**
   * Polls {@code condition} every {@code pollInterval} until it holds; a {@link RuntimeException}
   * from it counts as "not yet". On timeout fails with {@code what}, the last error and {@code
   * diagnosis} (state counts, process logs).
   */
  public static void awaitThroughErrors(
      String what,
      Duration timeout,
      Duration pollInterval,
      BooleanSupplier condition,
      Supplier<String> diagnosis) {
    AtomicReference<RuntimeException> lastError = new AtomicReference<>();
    try {
      await(what)
          .atMost(timeout)
          .pollDelay(Duration.ZERO)
          .pollInterval(pollInterval)
          .until(
              () -> {
                try {
                  return condition.getAsBoolean();
                } catch (RuntimeException e) {
                  lastError.set(e);
                  return false;
                }
              });
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          "timed out after "
              + timeout
              + " waiting for "
              + what
              + (lastError.get() == null ? "" : "; last poll error: " + lastError.get())
              + "; "
              + diagnosis.get(),
          e);
    }
  }

  /** One poll of a consumer or queue: adds whatever arrived to the caller's collection. */
  @FunctionalInterface
  public interface Take {
    void take() throws Exception;
  }

  /**
   * Runs {@code take} until {@code enough} holds (at most {@code timeout}), then for {@code
   * lateWindow} more, so that late duplicates are collected too. Polls in the calling thread (a
   * Kafka consumer is single-threaded). On timeout returns with what arrived: the caller's
   * assertions say what is missing.
   */
  public static void collect(
      Duration timeout,
      Duration pollInterval,
      Duration lateWindow,
      Take take,
      BooleanSupplier enough) {
    try {
      await("enough collected")
          .atMost(timeout)
          .pollInSameThread()
          .pollDelay(Duration.ZERO)
          .pollInterval(pollInterval)
          .until(
              () -> {
                take.take();
                return enough.getAsBoolean();
              });
    } catch (ConditionTimeoutException e) {
      return; // the caller's assertions report what arrived
    }
    if (!lateWindow.isZero()) {
      await("late duplicates")
          .during(lateWindow)
          .atMost(lateWindow.multipliedBy(3))
          .pollInSameThread()
          .pollDelay(Duration.ZERO)
          .pollInterval(pollInterval)
          .until(
              () -> {
                take.take();
                return true;
              });
    }
  }
}
