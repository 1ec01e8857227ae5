package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.UUID;

/** A job row as stored, for inspection (admin, tests, reconciliation). */
public record StoredMessage(
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
    Instant confirmedAt) {}
