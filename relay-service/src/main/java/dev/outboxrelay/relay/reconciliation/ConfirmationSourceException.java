package dev.outboxrelay.relay.reconciliation;

/**
 * A confirmation source could not answer; the run ends with this as its error and moves nothing.
 */
public class ConfirmationSourceException extends RuntimeException {
  public ConfirmationSourceException(String message) {
    super(message);
  }

  public ConfirmationSourceException(String message, Throwable cause) {
    super(message, cause);
  }
}
