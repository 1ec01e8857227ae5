package dev.outboxrelay.outbox.inbox;

import java.time.Duration;
import java.util.Optional;

/**
 * Thrown by an {@link InboxHandler} when the delivery could not be applied now but may be later (a
 * dependency is down): nothing is recorded, and the webhook answers 503 with {@code Retry-After}.
 */
public class TransientFailureException extends RuntimeException {
  private final Duration retryAfter;

  public TransientFailureException(String message, Duration retryAfter) {
    this(message, retryAfter, null);
  }

  public TransientFailureException(String message, Duration retryAfter, Throwable cause) {
    super(message, cause);
    this.retryAfter = retryAfter;
  }

  /** When to try again, if the handler knows. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }
}
