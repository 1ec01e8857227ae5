package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.UUID;

/**
 * A job row as stored, for inspection (admin, tests, reconciliation).
 *
 * @param payload the body, or for a by-reference job its reference text ({@link
 *     OutboxStore#findPayload} reads the body)
 * @param payloadByReference the body is in {@code outbox_payload}, not in {@code payload}
 */
public record StoredJob(
    long id,
    String operationId,
    String destination,
    String orderingKey,
    String payload,
    String contentType,
    String headersJson,
    char state,
    UUID claimToken,
    Instant leaseUntil,
    Instant deliverAfter,
    int attempts,
    String lastError,
    Instant createdAt,
    Instant claimedAt,
    Instant sentAt,
    Instant confirmedAt,
    boolean payloadByReference) {}
