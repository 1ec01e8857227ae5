package dev.outboxrelay.outbox.inbox;

import java.time.Instant;
import java.util.List;

/**
 * One page of the ledger: {@code {"items":[...],"next":<instant or null>}}, the JSON the relay's
 * {@code http-ledger} reconciliation reads. Pass {@code next} as {@code since} for the next page;
 * null on the last page.
 */
public record InboxLedgerPage(List<InboxLedgerEntry> items, Instant next) {}
