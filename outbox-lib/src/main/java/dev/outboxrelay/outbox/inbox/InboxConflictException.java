package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.error.OutboxException;

/**
 * The operation ID was applied before with another payload: the sender reused an ID for a different
 * message. Nothing was written or run; the caller's transaction is still usable.
 */
public class InboxConflictException extends OutboxException {
  private final String operationId;
  private final String destination;

  public InboxConflictException(String operationId, String destination) {
    super(
        "operation ID '"
            + operationId
            + "' of destination '"
            + destination
            + "' was applied with a different payload");
    this.operationId = operationId;
    this.destination = destination;
  }

  public String operationId() {
    return operationId;
  }

  public String destination() {
    return destination;
  }
}
