package dev.outboxrelay.demo.sink;

import java.time.Instant;
import java.util.List;

/**
 * A page of the ledger.
 *
 * @param items entries in {@code appliedAt}, then operation ID, order
 * @param next the {@code since} value for the next page; null on the last page
 */
public record LedgerPage(List<LedgerEntry> items, Instant next) {}
