package dev.outboxrelay.outbox.inbox;

import java.time.Instant;

/**
 * What {@link Inbox#receive} did.
 *
 * @param applied true when this call ran the handler; false for a repeat (already applied)
 * @param outcome the handler's outcome, the first one for a repeat
 * @param deliveries deliveries of this ID so far, this one included (as seen in this transaction)
 * @param appliedAt when the first delivery was applied (the database clock)
 */
public record InboxReceipt(
    String operationId,
    String destination,
    boolean applied,
    String outcome,
    long deliveries,
    Instant appliedAt) {}
