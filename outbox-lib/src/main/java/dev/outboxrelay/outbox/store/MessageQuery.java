package dev.outboxrelay.outbox.store;

/**
 * One page of the job listing: rows with {@code id > afterId}, in id order, matching every
 * condition that is not null (keyset paging: a page boundary stays put while rows are added).
 *
 * @param state one of {@code R, W, S, C, D}, or null for any
 * @param destination exact destination, or null for any
 * @param orderingKey exact ordering key, or null for any
 * @param afterId the last id of the previous page, 0 for the first
 * @param limit rows on the page, at least 1
 */
public record MessageQuery(Character state, String destination, String orderingKey, long afterId, int limit) {
  public MessageQuery {
    if (state != null && "RWSCD".indexOf(state) < 0) {
      throw new IllegalArgumentException("state must be one of R, W, S, C, D, was " + state);
    }
    if (afterId < 0) {
      throw new IllegalArgumentException("afterId must not be negative, was " + afterId);
    }
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive, was " + limit);
    }
  }
}
