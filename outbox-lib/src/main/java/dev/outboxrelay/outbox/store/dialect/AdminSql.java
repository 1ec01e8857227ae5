package dev.outboxrelay.outbox.store.dialect;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The reads of one job and of the counts, and the operator's listing and actions (replay, cancel)
 * ({@link AdminStatements} hands them out; the enqueue reads a job by its operation ID too).
 */
abstract class AdminSql extends TransitionSql {

  AdminSql(String name, SqlClock clock, TypeBinding binding, ErrorCodes errors) {
    super(name, clock, binding, errors);
  }

  // ---- inspection ----------------------------------------------------------------------------

  String countByStateSql() {
    return "SELECT state, COUNT(*) FROM outbox_message GROUP BY state";
  }

  /**
   * Columns: since when the longest-waiting job has been waiting (null if none), database now. A
   * job never tried waits since its {@code deliver_after} once that is due; a job being retried
   * (attempts > 0, ready in backoff or in flight) waits since its first attempt started, so a
   * backlog that a failing sink keeps bouncing back into backoff still ages.
   */
  String oldestReadySql() {
    return "SELECT MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "(SELECT MIN(a.started_at) FROM outbox_attempt a WHERE a.message_id = m.id),"
        + " m.deliver_after) END), "
        + now()
        + " FROM outbox_message m"
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= "
        + now()
        + "))";
  }

  /**
   * {@link #oldestReadySql()} grouped by destination, with the count of ready jobs due now.
   * Columns: destination, ready due jobs, since when the destination's longest-waiting job has been
   * waiting, database now. Same WHERE as {@link #oldestReadySql()}, so both read the ready and
   * leased jobs from {@code ix_outbox_message_ready (state, id)} (since V8; PostgresListingPlanIT).
   */
  String backlogByDestinationSql() {
    return "SELECT m.destination,"
        + " SUM(CASE WHEN m.state = 'R' AND m.deliver_after <= "
        + now()
        + " THEN 1 ELSE 0 END),"
        + " MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "(SELECT MIN(a.started_at) FROM outbox_attempt a WHERE a.message_id = m.id),"
        + " m.deliver_after) END), "
        + now()
        + " FROM outbox_message m"
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= "
        + now()
        + "))"
        + " GROUP BY m.destination ORDER BY m.destination";
  }

  /** Parameters: id. Columns: {@link #MESSAGE_COLUMNS}. */
  String findJobSql() {
    return "SELECT " + MESSAGE_COLUMNS + " FROM outbox_message WHERE id = ?";
  }

  /**
   * The out-of-band body of one job, by its primary key. Parameters: message_id. Columns:
   * message_id, body, size_bytes, sha256.
   */
  String findPayloadSql() {
    return "SELECT message_id, body, size_bytes, sha256 FROM outbox_payload WHERE message_id = ?";
  }

  /** Parameters: operation_id. Columns: {@link #MESSAGE_COLUMNS}. */
  String findByOperationIdSql() {
    return "SELECT " + MESSAGE_COLUMNS + " FROM outbox_message WHERE operation_id = ?";
  }

  /** Parameters: message_id. */
  String attemptsSql() {
    return "SELECT message_id, attempt_no, claim_token, started_at, finished_at, outcome,"
        + " error_class, error_message, response_summary, relay_instance FROM outbox_attempt"
        + " WHERE message_id = ? ORDER BY id";
  }

  // ---- admin: inspection and operator actions ------------------------------------------------

  /**
   * One page of the listing, in id order; {@code q.limit()} rows at most. Columns: {@link
   * #SUMMARY_COLUMNS}. Keyset paging on the primary key, so a page costs its size, not its offset;
   * every condition of {@code q} is a bound parameter.
   */
  BoundSql listJobs(Listing q) {
    StringBuilder sql =
        new StringBuilder(
            "SELECT "
                + SUMMARY_COLUMNS
                + " FROM outbox_message m"
                + LATEST_FAILURE_JOIN
                + " WHERE m.id > ?");
    List<Object> params = new ArrayList<>(List.of(q.afterId()));
    and(sql, params, "m.state = ?", q.state() == null ? null : String.valueOf(q.state()));
    and(sql, params, "m.destination = ?", q.destination());
    and(sql, params, "m.ordering_key = ?", q.orderingKey());
    and(sql, params, "f.error_class = ?", q.errorClass());
    and(
        sql,
        params,
        "m.operation_id LIKE ? ESCAPE '" + LIKE_ESCAPE + "'",
        q.operationIdContains() == null ? null : containsPattern(q.operationIdContains()));
    and(sql, params, LISTED_AT + " >= ?", q.from());
    and(sql, params, LISTED_AT + " < ?", q.to());
    params.add(q.limit());
    return new BoundSql(sql.append(" ORDER BY m.id").append(limitParam()).toString(), params);
  }

  /**
   * A {@code LIKE} pattern matching text that contains {@code text} literally: its wildcards (and
   * the escape character) escaped with {@link #LIKE_ESCAPE}.
   */
  String containsPattern(String text) {
    StringBuilder p = new StringBuilder("%");
    for (char ch : text.toCharArray()) {
      if (likeSpecial(ch)) {
        p.append(LIKE_ESCAPE);
      }
      p.append(ch);
    }
    return p.append('%').toString();
  }

  /** Whether {@code ch} means something in a {@code LIKE} pattern. */
  boolean likeSpecial(char ch) {
    return ch == '%' || ch == '_' || ch == LIKE_ESCAPE;
  }

  /** Counts the dead jobs a filter matches. Columns: the count. */
  BoundSql countDead(
      String destination, String errorClass, Instant diedFrom, Instant diedTo, String orderingKey) {
    StringBuilder sql =
        new StringBuilder(
            "SELECT COUNT(*) FROM outbox_message m" + LATEST_FAILURE_JOIN + " WHERE m.state = 'D'");
    List<Object> params = new ArrayList<>();
    deadConditions(sql, params, destination, errorClass, diedFrom, diedTo, orderingKey);
    return new BoundSql(sql.toString(), params);
  }

  /**
   * Replays up to {@code limit} of the dead jobs a filter matches, lowest ids first: each {@code D
   * → R} as by {@link #replayDeadSql()}, conditional on still being {@code D}. Returns the update
   * count.
   */
  BoundSql replayDead(
      String destination,
      String errorClass,
      Instant diedFrom,
      Instant diedTo,
      String orderingKey,
      int limit) {
    StringBuilder select =
        new StringBuilder(
            "SELECT m.id FROM outbox_message m" + LATEST_FAILURE_JOIN + " WHERE m.state = 'D'");
    List<Object> params = new ArrayList<>();
    deadConditions(select, params, destination, errorClass, diedFrom, diedTo, orderingKey);
    params.add(limit);
    select.append(" ORDER BY m.id").append(limitParam());
    return new BoundSql(updatePickedDead(replayAssignments(), select.toString()), params);
  }

  /**
   * The bulk replay's UPDATE: applies {@code assignments} ({@code SET ...}) to the rows whose ids
   * {@code pickIds} selects (a limited, ordered {@code SELECT m.id FROM outbox_message m ...}),
   * only while they are still {@code D}.
   */
  String updatePickedDead(String assignments, String pickIds) {
    return "UPDATE outbox_message "
        + assignments
        + " WHERE state = 'D' AND id IN ("
        + pickIds
        + ")";
  }

  private static void deadConditions(
      StringBuilder sql,
      List<Object> params,
      String destination,
      String errorClass,
      Instant diedFrom,
      Instant diedTo,
      String orderingKey) {
    and(sql, params, "m.destination = ?", destination);
    and(sql, params, "f.error_class = ?", errorClass);
    and(sql, params, DIED_AT + " >= ?", diedFrom);
    and(sql, params, DIED_AT + " < ?", diedTo);
    and(sql, params, "m.ordering_key = ?", orderingKey);
  }

  /** Appends {@code AND condition} with its one parameter when the value is set. */
  private static void and(StringBuilder sql, List<Object> params, String condition, Object value) {
    if (value != null) {
      sql.append(" AND ").append(condition);
      params.add(value);
    }
  }

  /** The replay's assignments: a full attempt budget, due now, no claim. */
  private String replayAssignments() {
    // Not waiting: the claim's head check holds it back while an earlier job of its key is
    // unfinished, and no final transition of an earlier job may come to clear a wait.
    return "SET state = 'R', attempts = 0, deliver_after = "
        + now()
        + ", claim_token = NULL, lease_until = NULL, key_wait = "
        + keyWaitFalse();
  }

  /**
   * D → R for another full attempt budget, due now; the last error stays until the next attempt
   * replaces it. Conditional on {@code D}: 0 rows means unknown or not dead. Parameters: id.
   */
  String replayDeadSql() {
    return "UPDATE outbox_message " + replayAssignments() + " WHERE id = ? AND state = 'D'";
  }

  /**
   * R → D by an operator. Conditional on {@code R}: a {@code W} job is in flight and cannot be
   * stopped mid-send. Parameters: last_error, id.
   */
  String cancelReadySql() {
    return "UPDATE outbox_message SET state = 'D', last_error = ? WHERE id = ? AND state = 'R'";
  }

  /**
   * Records a cancel as the job's latest failure (so it has an error class and a time of death),
   * numbered as the attempt that will now not happen. Parameters: error_message, message_id.
   */
  String insertCancelAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, started_at, outcome, error_class,"
        + " error_message) SELECT id, attempts + 1, "
        + now()
        + ", 'CANCELLED', 'Cancelled', ?"
        + " FROM outbox_message WHERE id = ?";
  }

  /** Columns: destination, state, count. */
  String countByDestinationAndStateSql() {
    return "SELECT destination, state, COUNT(*) FROM outbox_message GROUP BY destination, state"
        + " ORDER BY destination, state";
  }

  /** Columns: error class (null when none), count; largest first. */
  String countDeadByErrorClassSql() {
    return "SELECT f.error_class, COUNT(*) FROM outbox_message m"
        + LATEST_FAILURE_JOIN
        + " WHERE m.state = 'D' GROUP BY f.error_class ORDER BY 2 DESC, 1";
  }

  /**
   * Ordering keys with dead jobs, the oldest dead job first. Parameters: limit. Columns:
   * ordering_key, dead count, lowest dead id.
   */
  String deadOrderingKeysSql() {
    return "SELECT ordering_key, COUNT(*), MIN(id) FROM outbox_message"
        + " WHERE state = 'D' AND ordering_key IS NOT NULL GROUP BY ordering_key ORDER BY 3"
        + limitParam();
  }
}
