package dev.outboxrelay.outbox.error;

/** A database error at the store boundary, with the operation and row it concerned. */
public class OutboxStoreException extends OutboxException {
  public OutboxStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
