package dev.outboxrelay.outbox.store;

import java.time.Instant;

/**
 * One page of the job listing: rows with {@code id > afterId}, in id order, matching every
 * condition that is not null (keyset paging: a page boundary stays put while rows are added). Every
 * condition is applied by the database, so a page costs its size whatever the filter.
 *
 * @param state a {@link JobState#code()}, or null for any
 * @param destination exact destination, or null for any
 * @param orderingKey exact ordering key, or null for any
 * @param errorClass exact error class of the job's latest failure, or null for any
 * @param operationIdContains text the operation ID contains (case-sensitive, {@code %} and {@code
 *     _} taken literally), or null for any
 * @param from the job's time at or after this (its creation; for a dead job the time it died), or
 *     null for any
 * @param to the same time before this, or null for any
 * @param afterId the last id of the previous page, 0 for the first
 * @param limit rows on the page, at least 1
 */
public record JobQuery(
    Character state,
    String destination,
    String orderingKey,
    String errorClass,
    String operationIdContains,
    Instant from,
    Instant to,
    long afterId,
    int limit) {
  public JobQuery {
    if (state != null) {
      try {
        JobState.fromCode(state);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "state must be one of " + JobState.choices() + ", was " + state, e);
      }
    }
    if (afterId < 0) {
      throw new IllegalArgumentException("afterId must not be negative, was " + afterId);
    }
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive, was " + limit);
    }
    if (from != null && to != null && !from.isBefore(to)) {
      throw new IllegalArgumentException("from (" + from + ") must be before to (" + to + ")");
    }
  }

  /** A page filtered by state, destination and ordering key only. */
  public JobQuery(
      Character state, String destination, String orderingKey, long afterId, int limit) {
    this(state, destination, orderingKey, null, null, null, null, afterId, limit);
  }
}
