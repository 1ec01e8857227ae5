package dev.outboxrelay.outbox.inbox;

import java.time.Instant;

/**
 * One applied operation ID, in the relay's {@code http-ledger} format.
 *
 * @param messageId the relay's job id, when the delivery carried it
 * @param appliedAt when the first delivery applied it
 * @param deliveries how many deliveries arrived (1 + repeats)
 * @param appliedCount how many times the effect was applied: 1 by construction of the inbox
 */
public record InboxLedgerEntry(
    String operationId,
    String destination,
    Long messageId,
    Instant appliedAt,
    long deliveries,
    long appliedCount) {}
