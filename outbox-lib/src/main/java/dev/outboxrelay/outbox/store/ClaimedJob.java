package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * A job owned by the caller until {@code leaseUntil} (database clock).
 *
 * @param payload the body; for a by-reference job as claimed, only its reference text (the claim
 *     never reads out-of-band bodies): load the body with {@link OutboxStore#findPayload} and send
 *     {@link #withPayload} of it
 * @param attempts attempts finished before this claim; this delivery is attempt {@code attempts +
 *     1}
 * @param payloadByReference the body is in {@code outbox_payload}, not in {@code payload}
 */
public record ClaimedJob(
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
    Instant leaseUntil,
    boolean payloadByReference) {

  /** A job whose payload is inline. */
  public ClaimedJob(
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
    this(
        id,
        operationId,
        destination,
        orderingKey,
        payload,
        contentType,
        headers,
        attempts,
        claimToken,
        createdAt,
        leaseUntil,
        false);
  }

  /** The same claim carrying its full body: what a sink is given for a by-reference job. */
  public ClaimedJob withPayload(String body) {
    return new ClaimedJob(
        id,
        operationId,
        destination,
        orderingKey,
        body,
        contentType,
        headers,
        attempts,
        claimToken,
        createdAt,
        leaseUntil,
        false);
  }

  /** The number of the delivery attempt this claim makes (1-based). */
  public int attemptNo() {
    return attempts + 1;
  }
}
