package dev.outboxrelay.outbox.error;

/**
 * Base class of every exception the outbox throws. Unchecked: callers roll back their transaction.
 */
public class OutboxException extends RuntimeException {
  public OutboxException(String message) {
    super(message);
  }

  public OutboxException(String message, Throwable cause) {
    super(message, cause);
  }
}
