package dev.outboxrelay.outbox.store;

import java.time.Instant;

/**
 * One job of a reconciliation window with its confirmation, or a confirmation naming no job ({@code
 * messageId} and {@code state} null), classified by the database.
 *
 * @param confirmedCount the applications the sink reported (0 when unconfirmed)
 * @param confirmedAt when the sink applied it; null when unconfirmed
 * @param attempts the job's attempts as read, so a state move can check nothing changed since
 */
public record WindowEntry(
    Long messageId,
    String operationId,
    String destination,
    Character state,
    Instant sentAt,
    String lastError,
    Integer attempts,
    int confirmedCount,
    Instant confirmedAt,
    ReconciliationCategory category) {

  public boolean knownJob() {
    return messageId != null;
  }
}
