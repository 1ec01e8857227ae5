package dev.outboxrelay.demo.sink;

import java.time.Instant;

/**
 * One applied operation ID.
 *
 * @param appliedAt when the first delivery applied it
 * @param deliveries how many deliveries arrived (1 + redeliveries)
 * @param appliedCount how many invoices exist for it: 1, unless deduplication failed
 */
public record LedgerEntry(
    String operationId,
    String destination,
    Long messageId,
    Instant appliedAt,
    long deliveries,
    long appliedCount) {}
