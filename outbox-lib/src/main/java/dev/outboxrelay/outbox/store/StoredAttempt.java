package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.UUID;

/**
 * One row of {@code outbox_attempt}; {@code relayInstance} null when no relay made it or it
 * predates V7.
 */
public record StoredAttempt(
    long messageId,
    int attemptNo,
    UUID claimToken,
    Instant startedAt,
    Instant finishedAt,
    AttemptOutcome outcome,
    String errorClass,
    String errorMessage,
    String responseSummary,
    String relayInstance) {}
