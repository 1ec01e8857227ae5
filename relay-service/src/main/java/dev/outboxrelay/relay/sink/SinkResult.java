package dev.outboxrelay.relay.sink;

import java.time.Duration;
import java.util.Optional;

/** The outcome of one delivery. {@code summary} is a short description of the sink's answer. */
public sealed interface SinkResult {
  String summary();

  /** The sink accepted the job. */
  record Delivered(String summary) implements SinkResult {}

  /**
   * Transient failure; {@code retryAfter} is the sink's own hint (e.g. Retry-After), which wins.
   */
  record RetryLater(Optional<Duration> retryAfter, String errorClass, String error, String summary)
      implements SinkResult {}

  /** Will never succeed as it is: the job goes DEAD with this diagnosis. */
  record PermanentFailure(String errorClass, String error, String summary) implements SinkResult {}
}
