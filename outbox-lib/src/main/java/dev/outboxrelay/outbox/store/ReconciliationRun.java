package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A reconciliation run as stored. Counts and items are empty while it runs ({@code finishedAt}
 * null) and when it ended with an {@code error} instead of a verdict.
 *
 * @param triggeredBy {@code schedule} or {@code operator}
 * @param owner the relay instance that ran it
 * @param scheduleSlot the window end of a scheduled run, null on demand
 * @param counts per reported category (see {@link ReconciliationCategory#REPORTED})
 * @param pending jobs of the window not judged yet
 */
public record ReconciliationRun(
    long id,
    Instant windowStart,
    Instant windowEnd,
    Instant startedAt,
    Instant finishedAt,
    String triggeredBy,
    String owner,
    Instant scheduleSlot,
    Map<ReconciliationCategory, Integer> counts,
    int pending,
    String error,
    List<ReconciliationItem> items) {

  public ReconciliationRun withItems(List<ReconciliationItem> all) {
    return new ReconciliationRun(
        id,
        windowStart,
        windowEnd,
        startedAt,
        finishedAt,
        triggeredBy,
        owner,
        scheduleSlot,
        counts,
        pending,
        error,
        List.copyOf(all));
  }
}
