package dev.outboxrelay.outbox.store;

import java.time.Duration;

/**
 * What the relay observed during one delivery; written to {@code outbox_attempt}.
 *
 * @param elapsed how long the send took (the row's {@code started_at} is database now minus this)
 * @param errorClass exception class or error kind, null on success
 * @param responseSummary short sink response (status, first bytes of the body), may be null
 */
public record AttemptRecord(Duration elapsed, String errorClass, String errorMessage, String responseSummary) {
  public static AttemptRecord success(Duration elapsed, String responseSummary) {
    return new AttemptRecord(elapsed, null, null, responseSummary);
  }
}
