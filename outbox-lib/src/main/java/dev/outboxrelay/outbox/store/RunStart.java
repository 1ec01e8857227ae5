package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.Objects;

/**
 * What a new reconciliation run records at its start.
 *
 * @param scheduleSlot the window end of a scheduled run (unique across runs), null on demand
 */
public record RunStart(
    Instant windowStart,
    Instant windowEnd,
    String triggeredBy,
    String owner,
    Instant scheduleSlot) {
  public RunStart {
    Objects.requireNonNull(windowStart, "windowStart");
    Objects.requireNonNull(windowEnd, "windowEnd");
    Objects.requireNonNull(triggeredBy, "triggeredBy");
    Objects.requireNonNull(owner, "owner");
    if (!windowEnd.isAfter(windowStart)) {
      throw new IllegalArgumentException(
          "window_end (" + windowEnd + ") must be after window_start (" + windowStart + ")");
    }
  }
}
