package dev.outboxrelay.outbox.store.dialect;

import java.util.Collections;
import java.util.Objects;

/**
 * The bottom of a {@link Dialect}: the parts every statement is built from (the database's name,
 * {@link SqlClock}, {@link TypeBinding} and {@link ErrorCodes}), the column lists the stores map
 * and the fragments the statement families share (now, placeholders, row limits). Each family
 * builds on the one below it: {@link ClaimSql}, {@link TransitionSql}, {@link AdminSql}, {@link
 * ReconciliationSql}, then {@link Dialect} (the inbox and the statement sets); a database's class
 * extends {@link Dialect} and overrides what differs in any of them.
 */
abstract class SqlFragments {

  /**
   * Columns returned by a claim, in this order. Only outbox_message: a by-reference job's body
   * stays in outbox_payload until its sender loads it ({@link JobStatements#findPayloadSql}).
   */
  public static final String CLAIM_COLUMNS =
      "id, operation_id, destination, ordering_key, payload, content_type, headers, attempts,"
          + " claim_token, created_at, lease_until, payload_by_ref";

  /** Every column of outbox_message, in this order. */
  public static final String MESSAGE_COLUMNS =
      "id, operation_id, destination, ordering_key, payload, content_type, headers, state,"
          + " claim_token, lease_until, deliver_after, attempts, last_error, created_at, claimed_at,"
          + " sent_at, confirmed_at, payload_by_ref, key_wait";

  /** Columns of {@link AdminStatements#listJobs}, in this order. */
  public static final String SUMMARY_COLUMNS =
      "m.id, m.operation_id, m.destination, m.ordering_key, m.content_type, m.state, m.attempts,"
          + " m.last_error, f.error_class, f.finished_at, m.deliver_after, m.created_at, m.claimed_at,"
          + " m.lease_until, m.sent_at, m.confirmed_at";

  /** Columns of {@link ReconciliationStatements#classifyWindowSql()}, in this order. */
  public static final String WINDOW_COLUMNS =
      "message_id, operation_id, destination, state, sent_at,"
          + " last_error, attempts, confirmed_count, confirmed_at, category";

  /** Columns of a reconciliation run row, in this order. */
  public static final String RUN_COLUMNS =
      "id, window_start, window_end, started_at, finished_at,"
          + " triggered_by, owner, schedule_slot, matched, sent_unconfirmed, confirmed_not_sent,"
          + " duplicate_effects, dead, pending, error";

  /** Columns of an inbox row as a delivery reads it. */
  static final String INBOX_COLUMNS = "payload_sha256, outcome, deliveries, applied_at";

  /** Columns of an inbox ledger entry. */
  static final String LEDGER_COLUMNS =
      "operation_id, destination, message_id, applied_at, deliveries";

  /**
   * The latest failed attempt of the job aliased {@code m}, joined as {@code f} (null columns when
   * it never failed). Outcomes that changed the job's state by failing; a {@code STALE} attempt (a
   * late result of a lost claim) changed nothing and is not the job's diagnosis.
   */
  static final String LATEST_FAILURE_JOIN =
      " LEFT JOIN outbox_attempt f ON f.id = (SELECT MAX(a.id) FROM outbox_attempt a"
          + " WHERE a.message_id = m.id AND a.outcome IN ('RETRY', 'DEAD', 'LEASE_EXPIRED', 'CANCELLED'))";

  /** When a dead job died: its latest failure, else (set dead by hand) its creation. */
  static final String DIED_AT = "COALESCE(f.finished_at, m.created_at)";

  /**
   * The character that makes the next one literal in a {@code LIKE} pattern ({@link
   * #containsPattern}).
   */
  static final char LIKE_ESCAPE = '!';

  /** A job's time for the listing's range: its creation, or for a dead job the time it died. */
  static final String LISTED_AT =
      "CASE WHEN m.state = 'D' THEN " + DIED_AT + " ELSE m.created_at END";

  // The parts every statement is built from, set once by the database's class (read through
  // Dialect's getters).
  final String name;
  final SqlClock clock;
  final TypeBinding binding;
  final ErrorCodes errors;

  SqlFragments(String name, SqlClock clock, TypeBinding binding, ErrorCodes errors) {
    this.name = Objects.requireNonNull(name, "name");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.binding = Objects.requireNonNull(binding, "binding");
    this.errors = Objects.requireNonNull(errors, "errors");
  }

  // ---- fragments -----------------------------------------------------------------------------

  final String now() {
    return clock.now();
  }

  final String nowPlusMillisParam() {
    return clock.nowPlusMillisParam();
  }

  /** SQL literal of a false {@code key_wait}. */
  String keyWaitFalse() {
    return "FALSE";
  }

  /** {@code (?, ?, ...)} with {@code n} placeholders. */
  static String placeholders(int n) {
    return "(" + String.join(", ", Collections.nCopies(n, "?")) + ")";
  }

  /** A row limit taking one parameter, after ORDER BY. */
  String limitParam() {
    return " LIMIT ?";
  }

  /** A NULL of an SQL type, e.g. {@code CAST(NULL AS BIGINT)}. */
  String nullOf(String type) {
    return "CAST(NULL AS " + type + ")";
  }

  /** Keeps the first {@code rows} rows (a number or {@code ?}); follows the ORDER BY. */
  String firstRows(String rows) {
    return " LIMIT " + rows;
  }
}
