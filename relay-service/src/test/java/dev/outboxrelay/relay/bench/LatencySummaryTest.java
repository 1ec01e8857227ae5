package dev.outboxrelay.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LatencySummaryTest {

  @Test
  void nearestRankPercentilesOfOneToHundredMilliseconds() {
    long[] nanos = new long[100];
    for (int i = 0; i < 100; i++) {
      nanos[99 - i] = (i + 1) * 1_000_000L; // unsorted on purpose
    }
    LatencySummary s = LatencySummary.of(nanos);
    assertEquals(100, s.count());
    assertEquals(50.0, s.p50Ms());
    assertEquals(95.0, s.p95Ms());
    assertEquals(99.0, s.p99Ms());
    assertEquals(100.0, s.maxMs());
    assertEquals(100_000_000L, nanos[0], "the input is not reordered");
  }

  @Test
  void aSingleValueIsEveryPercentile() {
    LatencySummary s = LatencySummary.of(new long[] {3_500_000L});
    assertEquals(3.5, s.p50Ms());
    assertEquals(3.5, s.p99Ms());
    assertEquals(3.5, s.maxMs());
  }

  @Test
  void rankNeverLeavesTheArray() {
    long[] sorted = {1, 2, 3};
    assertEquals(1, LatencySummary.rank(sorted, 0));
    assertEquals(3, LatencySummary.rank(sorted, 100));
    assertEquals(2, LatencySummary.rank(sorted, 50));
  }

  @Test
  void noValuesGiveNoFigures() {
    assertTrue(Double.isNaN(LatencySummary.of(new long[0]).p99Ms()));
  }
}
