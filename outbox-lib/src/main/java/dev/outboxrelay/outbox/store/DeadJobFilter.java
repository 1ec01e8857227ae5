package dev.outboxrelay.outbox.store;

import java.time.Instant;

/**
 * Which dead ({@code D}) jobs a bulk replay takes; every non-null condition must hold. A job's
 * error class and time of death are those of its latest failed attempt (the one that made it {@code
 * D}: {@code DEAD}, {@code LEASE_EXPIRED} at the last attempt, or {@code CANCELLED}); a dead job
 * without attempts (set by hand) has no error class and died at its creation.
 *
 * @param deadFrom died at or after this instant
 * @param deadTo died before this instant
 */
public record DeadJobFilter(
    String destination, String errorClass, Instant deadFrom, Instant deadTo, String orderingKey) {

  /** The filter that matches every dead job. */
  public static final DeadJobFilter ALL = new DeadJobFilter(null, null, null, null, null);

  public DeadJobFilter {
    if (deadFrom != null && deadTo != null && !deadFrom.isBefore(deadTo)) {
      throw new IllegalArgumentException(
          "deadFrom " + deadFrom + " must be before deadTo " + deadTo);
    }
  }

  /** True when no condition is set: the filter matches every dead job. */
  public boolean isEmpty() {
    return destination == null
        && errorClass == null
        && deadFrom == null
        && deadTo == null
        && orderingKey == null;
  }
}
