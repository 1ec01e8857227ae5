package dev.outboxrelay.outbox.store;

import java.util.Objects;

/**
 * One successful send to record as delivered in a batch ({@link OutboxStore#markDeliveredAll}): the
 * claim it was sent under and its attempt.
 */
public record DeliveredJob(ClaimedJob message, AttemptRecord attempt) {
  public DeliveredJob {
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(attempt, "attempt");
  }
}
