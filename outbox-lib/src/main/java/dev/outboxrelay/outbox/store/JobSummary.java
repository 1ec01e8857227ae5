package dev.outboxrelay.outbox.store;

import java.time.Instant;

/**
 * A job as the admin listing shows it: no payload or headers (a page of them could be large), plus
 * the diagnosis of its latest failure.
 *
 * @param errorClass error class of the job's latest failed attempt (retry, dead, expired lease or
 *     cancel), null when it never failed
 * @param failedAt when that attempt finished; for a dead job, when it died
 */
public record JobSummary(
    long id,
    String operationId,
    String destination,
    String orderingKey,
    String contentType,
    char state,
    int attempts,
    String lastError,
    String errorClass,
    Instant failedAt,
    Instant deliverAfter,
    Instant createdAt,
    Instant claimedAt,
    Instant leaseUntil,
    Instant sentAt,
    Instant confirmedAt) {}
