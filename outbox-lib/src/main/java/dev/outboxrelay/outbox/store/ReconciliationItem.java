package dev.outboxrelay.outbox.store;

import java.time.Instant;

/**
 * One reported difference of a run (every category but matched and pending).
 *
 * @param messageId null for a confirmation that names no job
 * @param state the job's state when classified; null when there is no job
 * @param action what the run did about it: {@code redriven}, {@code accepted}, {@code
 *     changed_concurrently} (the job moved before the conditional update), or null
 */
public record ReconciliationItem(
    String operationId,
    Long messageId,
    String destination,
    Character state,
    ReconciliationCategory category,
    Instant sentAt,
    int confirmedCount,
    String lastError,
    String action) {

  public static ReconciliationItem of(WindowEntry e, String action) {
    return new ReconciliationItem(
        e.operationId(),
        e.messageId(),
        e.destination(),
        e.state(),
        e.category(),
        e.sentAt(),
        e.confirmedCount(),
        e.lastError(),
        action);
  }
}
