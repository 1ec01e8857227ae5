package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.UUID;

/** One row of {@code outbox_attempt}. */
public record StoredAttempt(
    long messageId,
    int attemptNo,
    UUID claimToken,
    Instant startedAt,
    Instant finishedAt,
    AttemptOutcome outcome,
    String errorClass,
    String errorMessage,
    String responseSummary) {}
