package dev.outboxrelay.demo.sink;

/**
 * Totals over the whole ledger.
 *
 * @param applied operation IDs applied
 * @param deliveries deliveries received
 * @param redeliveries deliveries that were repeats ({@code deliveries - applied})
 * @param duplicateEffects operation IDs with more than one invoice (should be 0)
 */
public record LedgerSummary(
    long applied, long deliveries, long redeliveries, long duplicateEffects) {}
