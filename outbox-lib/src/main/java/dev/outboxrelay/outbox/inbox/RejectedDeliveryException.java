package dev.outboxrelay.outbox.inbox;

/**
 * Thrown by an {@link InboxHandler} that refuses a delivery for good (the order it names does not
 * exist, the amount is invalid): nothing is recorded, and the webhook answers 422, which the relay
 * does not retry (the job ends dead, for an operator to see).
 */
public class RejectedDeliveryException extends RuntimeException {
  public RejectedDeliveryException(String message) {
    super(message);
  }
}
