package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.error.OutboxException;

/** A delivery refused before anything was written; {@link #field()} names what is wrong. */
public class InvalidDeliveryException extends OutboxException {
  private final String field;

  public InvalidDeliveryException(String field, String message) {
    super(message);
    this.field = field;
  }

  /** {@code operationId}, {@code destination} or {@code payload}. */
  public String field() {
    return field;
  }
}
