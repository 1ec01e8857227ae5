package dev.outboxrelay.outbox;

/**
 * A validated message with its headers already serialised to JSON (null when none).
 *
 * @param byReference store the payload out of band in {@code outbox_payload} (it is over the inline
 *     threshold) and only a reference in the job's row
 */
record NewJob(OutboxMessage message, String headersJson, boolean byReference) {

  /** A message whose payload is stored inline. */
  public NewJob(OutboxMessage message, String headersJson) {
    this(message, headersJson, false);
  }
}
