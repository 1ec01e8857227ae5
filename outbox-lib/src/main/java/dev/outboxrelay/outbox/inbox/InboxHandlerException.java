package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.error.OutboxException;
import java.time.Duration;
import java.util.Optional;

/**
 * The handler failed (its exception is the cause); the inbox recorded nothing. With {@link
 * Inbox#receive} the caller's transaction was rolled back to where the call began and is usable;
 * with {@code TransactionalInbox} the transaction is rolled back.
 */
public class InboxHandlerException extends OutboxException {
  private final String operationId;

  public InboxHandlerException(String operationId, String message, Throwable cause) {
    super(message, cause);
    this.operationId = operationId;
  }

  public String operationId() {
    return operationId;
  }

  /** True when the handler threw {@link TransientFailureException}: retry later. */
  public boolean isTransient() {
    return getCause() instanceof TransientFailureException;
  }

  /** True when the handler threw {@link RejectedDeliveryException}: never retry. */
  public boolean isRejection() {
    return getCause() instanceof RejectedDeliveryException;
  }

  /** The handler's {@link TransientFailureException#retryAfter()}, if any. */
  public Optional<Duration> retryAfter() {
    return getCause() instanceof TransientFailureException t ? t.retryAfter() : Optional.empty();
  }
}
