package dev.outboxrelay.relay.bench;

import java.util.Arrays;

/** Percentiles of latencies in nanoseconds, by the nearest-rank method (no interpolation). */
record LatencySummary(int count, double p50Ms, double p95Ms, double p99Ms, double maxMs) {

  static LatencySummary of(long[] nanos) {
    if (nanos.length == 0) {
      return new LatencySummary(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return new LatencySummary(
        sorted.length,
        ms(rank(sorted, 50)),
        ms(rank(sorted, 95)),
        ms(rank(sorted, 99)),
        ms(sorted[sorted.length - 1]));
  }

  /** The smallest value with at least {@code percent}% of the values at or below it. */
  static long rank(long[] sorted, double percent) {
    int index = (int) Math.ceil(percent / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  private static double ms(long nanos) {
    return nanos / 1_000_000.0;
  }
}
