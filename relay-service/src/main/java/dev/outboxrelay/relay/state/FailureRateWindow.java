package dev.outboxrelay.relay.state;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;

/**
 * A destination's DOWN/UP decision from the deliveries of the last {@code window}, with a gap
 * between the two thresholds so that the state does not flap:
 *
 * <ul>
 *   <li>DOWN when the window holds at least {@code minFailures} failed deliveries and they are at
 *       least {@code downRate} of its deliveries (a refused connection to an idle destination
 *       counts as much as a burst of 5xx from a busy one: the share, not the number);
 *   <li>UP again at a delivery the sink answered once the failed share of the window is below
 *       {@code upRate}: after an outage that is when enough answered deliveries have come, or the
 *       outage's failures have aged out of the window. When the last delivery was answered and then
 *       none came (the backlog drained), the state is re-read as time passes: UP once the outage's
 *       failures have aged out enough, so an idle destination that recovered does not stay DOWN
 *       (and readiness 503) until its next delivery.
 * </ul>
 *
 * A few percent of retried deliveries among many never make it DOWN; a sink that refuses everything
 * is DOWN after {@code minFailures} attempts. Outcomes are counted in ten buckets of a tenth of the
 * window each, so memory does not grow with traffic. Not thread-safe: {@link StateChangeLog} calls
 * it under its lock.
 */
public final class FailureRateWindow implements StateChangeLog.Trigger {
  private static final int BUCKETS = 10;

  private final long bucketMillis;
  private final int minFailures;
  private final double downRate;
  private final double upRate;
  private final long[] bucketIndex = new long[BUCKETS];
  private final int[] failures = new int[BUCKETS];
  private final int[] successes = new int[BUCKETS];
  private boolean lastAnswered;

  /**
   * @throws IllegalArgumentException naming the setting when a value is out of range: a window
   *     under 10ms, {@code minFailures} under 1, rates outside (0, 1], or {@code upRate} not below
   *     {@code downRate}
   */
  public FailureRateWindow(Duration window, int minFailures, double downRate, double upRate) {
    if (window.toMillis() < BUCKETS) {
      throw new IllegalArgumentException(
          "outbox.relay.destination-health-window must be at least 10ms, was " + window);
    }
    if (minFailures < 1) {
      throw new IllegalArgumentException(
          "outbox.relay.destination-down-after-failures must be at least 1, was " + minFailures);
    }
    if (!(downRate > 0 && downRate <= 1)) {
      throw new IllegalArgumentException(
          "outbox.relay.destination-down-failure-rate must be above 0 and at most 1,"
              + " was "
              + downRate);
    }
    if (!(upRate > 0 && upRate < downRate)) {
      throw new IllegalArgumentException(
          String.format(
              Locale.ROOT,
              "outbox.relay.destination-up-failure-rate"
                  + " must be above 0 and below outbox.relay.destination-down-failure-rate (%s), was %s",
              downRate,
              upRate));
    }
    this.bucketMillis = window.toMillis() / BUCKETS;
    this.minFailures = minFailures;
    this.downRate = downRate;
    this.upRate = upRate;
    Arrays.fill(bucketIndex, Long.MIN_VALUE);
  }

  @Override
  public boolean failed(Instant now) {
    failures[slot(now)]++;
    lastAnswered = false;
    long[] counts = counts(now);
    return counts[0] >= minFailures && counts[0] >= downRate * (counts[0] + counts[1]);
  }

  @Override
  public boolean succeeded(Instant now) {
    successes[slot(now)]++;
    lastAnswered = true;
    return belowUpRate(now);
  }

  @Override
  public boolean recoveredBy(Instant now) {
    return lastAnswered && belowUpRate(now);
  }

  /**
   * The failed share of the window ending at {@code now} is under {@code upRate} (or it is empty).
   */
  private boolean belowUpRate(Instant now) {
    long[] counts = counts(now);
    return counts[0] == 0 || counts[0] < upRate * (counts[0] + counts[1]);
  }

  /** The bucket of {@code now}, emptied first when it last held an older tenth of time. */
  private int slot(Instant now) {
    long index = Math.floorDiv(now.toEpochMilli(), bucketMillis);
    int slot = (int) Math.floorMod(index, (long) BUCKETS);
    if (bucketIndex[slot] != index) {
      bucketIndex[slot] = index;
      failures[slot] = 0;
      successes[slot] = 0;
    }
    return slot;
  }

  /** {failed, answered} over the buckets of the window ending at {@code now}. */
  private long[] counts(Instant now) {
    long current = Math.floorDiv(now.toEpochMilli(), bucketMillis);
    long failed = 0;
    long answered = 0;
    for (int i = 0; i < BUCKETS; i++) {
      if (bucketIndex[i] > current - BUCKETS && bucketIndex[i] <= current) {
        failed += failures[i];
        answered += successes[i];
      }
    }
    return new long[] {failed, answered};
  }
}
