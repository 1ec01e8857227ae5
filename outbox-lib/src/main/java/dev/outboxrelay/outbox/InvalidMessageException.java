package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.error.OutboxException;

/**
 * A message was rejected before anything was written. {@link #field()} names the offending field
 * with its column name ({@code operation_id}, {@code destination}, {@code payload}, ...).
 */
public class InvalidMessageException extends OutboxException {
  private final String field;

  public InvalidMessageException(String field, String message) {
    super(field + ": " + message);
    this.field = field;
  }

  /** The column name of the rejected field. */
  public String field() {
    return field;
  }
}
