package dev.outboxrelay.outbox.store;

import java.time.Duration;
import java.time.Instant;

/**
 * What the relay observed during one delivery; written to {@code outbox_attempt}.
 *
 * @param elapsed how long the send took
 * @param errorClass exception class or error kind, null on success
 * @param responseSummary short sink response (status, first bytes of the body), may be null
 * @param startedAt when the send started, on the database clock: the row's {@code started_at}; null
 *     when unknown, then {@code started_at} is the recording time minus {@code elapsed} (later than
 *     the real start when the recording was delayed)
 * @param relayInstance the relay process that made the attempt (its {@code host/pid/random} name),
 *     the row's {@code relay_instance}; null when unknown
 */
public record AttemptRecord(
    Duration elapsed,
    String errorClass,
    String errorMessage,
    String responseSummary,
    Instant startedAt,
    String relayInstance) {

  /** An attempt by an unnamed relay. */
  public AttemptRecord(
      Duration elapsed,
      String errorClass,
      String errorMessage,
      String responseSummary,
      Instant startedAt) {
    this(elapsed, errorClass, errorMessage, responseSummary, startedAt, null);
  }

  /** An attempt whose start is unknown (recorded as the recording time minus {@code elapsed}). */
  public AttemptRecord(
      Duration elapsed, String errorClass, String errorMessage, String responseSummary) {
    this(elapsed, errorClass, errorMessage, responseSummary, null);
  }

  public static AttemptRecord success(Duration elapsed, String responseSummary) {
    return new AttemptRecord(elapsed, null, null, responseSummary);
  }

  /** The same attempt, started at {@code startedAt} (database clock). */
  public AttemptRecord startedAt(Instant startedAt) {
    return new AttemptRecord(
        elapsed, errorClass, errorMessage, responseSummary, startedAt, relayInstance);
  }

  /** The same attempt, made by the relay named {@code relayInstance}. */
  public AttemptRecord madeBy(String relayInstance) {
    return new AttemptRecord(
        elapsed, errorClass, errorMessage, responseSummary, startedAt, relayInstance);
  }
}
