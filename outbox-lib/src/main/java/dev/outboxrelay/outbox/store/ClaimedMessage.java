package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * A job owned by the caller until {@code leaseUntil} (database clock).
 *
 * @param attempts attempts finished before this claim; this delivery is attempt {@code attempts + 1}
 */
public record ClaimedMessage(
    long id,
    String operationId,
    String destination,
    String orderingKey,
    String payload,
    String contentType,
    Map<String, String> headers,
    int attempts,
    UUID claimToken,
    Instant createdAt,
    Instant leaseUntil) {

  /** The number of the delivery attempt this claim makes (1-based). */
  public int attemptNo() {
    return attempts + 1;
  }
}
