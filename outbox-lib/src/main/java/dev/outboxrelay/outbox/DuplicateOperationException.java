package dev.outboxrelay.outbox;

/**
 * The operation ID is already used by a job that would be sent differently: another destination,
 * payload, content type, ordering key or headers (trace headers aside). Re-enqueueing the same job
 * is a no-op instead ({@code created=false}, whatever the delay: the first job's schedule stands);
 * this exception means two different effects would share one idempotency key, which a sink would
 * silently merge.
 */
public class DuplicateOperationException extends InvalidMessageException {
  private final String operationId;
  private final long existingMessageId;

  public DuplicateOperationException(
      String operationId, long existingMessageId, String difference) {
    super(
        "operation_id",
        "'"
            + operationId
            + "' is already used by message "
            + existingMessageId
            + " with a different "
            + difference
            + "; an operation ID must name one effect");
    this.operationId = operationId;
    this.existingMessageId = existingMessageId;
  }

  public String operationId() {
    return operationId;
  }

  public long existingMessageId() {
    return existingMessageId;
  }
}
