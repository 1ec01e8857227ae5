package dev.outboxrelay.outbox.store.dialect;

/**
 * Reconciliation (confirmations, the classification of a window, the conditional state moves, runs)
 * and the fleet lock ({@link ReconciliationStatements} hands them out).
 */
abstract class ReconciliationSql extends AdminSql {

  ReconciliationSql(String name, SqlClock clock, TypeBinding binding, ErrorCodes errors) {
    super(name, clock, binding, errors);
  }

  // ---- reconciliation: confirmations ---------------------------------------------------------

  /**
   * Inserts a confirmation or replaces the existing one of the same operation ID and destination
   * (the source's current view wins). Parameters: operation_id, destination, confirmed_at,
   * applied_count, source.
   */
  abstract String upsertConfirmationSql();

  // ---- reconciliation: classification --------------------------------------------------------

  /**
   * Every job of one destination created in the window, with its confirmation, plus every
   * confirmation of that destination in the window (by confirmed_at) that names no job; each with
   * its category (docs/design.md "Reconciliation"), decided in this order:
   *
   * <ol>
   *   <li>{@code duplicate_effects}: applied more than once, whatever the job's state;
   *   <li>{@code matched}: {@code C}, or {@code S} applied exactly once;
   *   <li>{@code sent_unconfirmed}: {@code S}, sent before now - grace, not applied;
   *   <li>{@code confirmed_not_sent}: applied once but {@code R}, {@code W}, {@code D} or no job;
   *   <li>{@code dead}: {@code D}, not applied;
   *   <li>{@code pending}: not judged yet ({@code R}/{@code W}, or {@code S} inside the grace).
   * </ol>
   *
   * Parameters: grace millis (negated), destination, window start, window end, destination, window
   * start, window end. Columns: {@link #WINDOW_COLUMNS}; ordered by operation_id.
   */
  String classifyWindowSql() {
    String applied = "COALESCE(c.applied_count, 0)";
    return "SELECT m.id, m.operation_id, m.destination, m.state, m.sent_at, m.last_error, m.attempts, "
        + applied
        + ", c.confirmed_at, CASE"
        + " WHEN "
        + applied
        + " > 1 THEN 'duplicate_effects'"
        + " WHEN m.state = 'C' THEN 'matched'"
        + " WHEN m.state = 'S' AND "
        + applied
        + " = 1 THEN 'matched'"
        + " WHEN m.state = 'S' AND m.sent_at < "
        + nowPlusMillisParam()
        + " THEN 'sent_unconfirmed'"
        + " WHEN m.state = 'S' THEN 'pending'"
        + " WHEN "
        + applied
        + " = 1 THEN 'confirmed_not_sent'"
        + " WHEN m.state = 'D' THEN 'dead'"
        + " ELSE 'pending' END"
        + " FROM outbox_message m LEFT JOIN outbox_confirmation c"
        + " ON c.operation_id = m.operation_id AND c.destination = m.destination"
        + " WHERE m.destination = ? AND m.created_at >= ? AND m.created_at < ?"
        + " UNION ALL"
        // Explicit casts: the NULL columns of the second branch must carry the first one's types.
        + " SELECT "
        + nullOf("BIGINT")
        + ", c.operation_id, c.destination, "
        + nullOf("CHAR(1)")
        + ","
        + " "
        + nullOf(clock.timestampType())
        + ", "
        + nullOf("VARCHAR(2000)")
        + ", "
        + nullOf("INTEGER")
        + ","
        + " c.applied_count, c.confirmed_at,"
        + " CASE WHEN c.applied_count > 1 THEN 'duplicate_effects' ELSE 'confirmed_not_sent' END"
        + " FROM outbox_confirmation c"
        + " WHERE c.destination = ? AND c.confirmed_at >= ? AND c.confirmed_at < ?"
        + " AND NOT EXISTS (SELECT 1 FROM outbox_message m"
        + " WHERE m.operation_id = c.operation_id AND m.destination = c.destination)"
        + " ORDER BY 2";
  }

  // ---- reconciliation: conditional state moves, each re-checks what the classification saw --

  /**
   * {@code S → C} for a matched job, only while it is still {@code S} with the attempts seen (a
   * re-delivery or a re-drive in between leaves it alone). Parameters: confirmed_at, id, attempts.
   */
  String confirmSentSql() {
    return "UPDATE outbox_message SET state = 'C', confirmed_at = ?"
        + " WHERE id = ? AND state = 'S' AND attempts = ?";
  }

  /**
   * {@code S → R} (re-drive, same operation ID) for a sent, unconfirmed job, only while it is still
   * {@code S} with the attempts seen and still has no confirmation. Parameters: last_error, id,
   * attempts.
   */
  String redriveSql() {
    return "UPDATE outbox_message SET state = 'R', deliver_after = "
        + now()
        + ", last_error = ?,"
        + " claim_token = NULL, lease_until = NULL"
        + " WHERE id = ? AND state = 'S' AND attempts = ? AND NOT EXISTS (SELECT 1"
        + " FROM outbox_confirmation c WHERE c.operation_id = outbox_message.operation_id"
        + " AND c.destination = outbox_message.destination)";
  }

  /**
   * {@code R}/{@code D} → {@code C} for a job the sink confirmed although the relay never recorded
   * it sent (a lost completion), only while it is still in the state and attempts seen. sent_at
   * keeps its value or becomes the confirmation time. Parameters: confirmed_at (for sent_at),
   * confirmed_at, id, state, attempts.
   */
  String acceptConfirmedSql() {
    return "UPDATE outbox_message SET state = 'C', sent_at = COALESCE(sent_at, ?), confirmed_at = ?,"
        + " claim_token = NULL, lease_until = NULL"
        + " WHERE id = ? AND state = ? AND attempts = ? AND state IN ('R', 'D')";
  }

  // ---- reconciliation: runs ------------------------------------------------------------------

  /**
   * Starts a run (started_at = now); the generated id is read back. Parameters: window_start,
   * window_end, triggered_by, owner, schedule_slot (null on demand).
   */
  String insertRunSql() {
    return "INSERT INTO outbox_reconciliation_run (window_start, window_end, triggered_by, owner,"
        + " schedule_slot, started_at) VALUES (?, ?, ?, ?, ?, "
        + now()
        + ")";
  }

  /**
   * Finishes a running run. Parameters: matched, sent_unconfirmed, confirmed_not_sent,
   * duplicate_effects, dead, pending, error, id.
   */
  String finishRunSql() {
    return "UPDATE outbox_reconciliation_run SET finished_at = "
        + now()
        + ", matched = ?,"
        + " sent_unconfirmed = ?, confirmed_not_sent = ?, duplicate_effects = ?, dead = ?,"
        + " pending = ?, error = ? WHERE id = ? AND finished_at IS NULL";
  }

  /**
   * Parameters: run_id, operation_id, message_id, destination, state, category, sent_at,
   * confirmed_count, last_error, action.
   */
  String insertItemSql() {
    return "INSERT INTO outbox_reconciliation_item (run_id, operation_id, message_id, destination,"
        + " state, category, sent_at, confirmed_count, last_error, action)"
        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  }

  /** Parameters: id. Columns: {@link #RUN_COLUMNS}. */
  String findRunSql() {
    return "SELECT " + RUN_COLUMNS + " FROM outbox_reconciliation_run WHERE id = ?";
  }

  /** The newest finished run. Columns: {@link #RUN_COLUMNS}. */
  String latestFinishedRunSql() {
    return "SELECT "
        + RUN_COLUMNS
        + " FROM outbox_reconciliation_run WHERE finished_at IS NOT NULL"
        + " ORDER BY finished_at DESC, id DESC"
        + firstRows("1");
  }

  /**
   * The newest finished runs, newest first, without items (the report page's history). Parameters:
   * limit. Columns: {@link #RUN_COLUMNS}.
   */
  String recentRunsSql() {
    return "SELECT "
        + RUN_COLUMNS
        + " FROM outbox_reconciliation_run WHERE finished_at IS NOT NULL"
        + " ORDER BY id DESC"
        + firstRows("?");
  }

  /** The newest run that finished with a verdict. Columns: {@link #RUN_COLUMNS}, database now. */
  String latestSuccessfulRunSql() {
    return "SELECT "
        + RUN_COLUMNS
        + ", "
        + now()
        + " FROM outbox_reconciliation_run"
        + " WHERE finished_at IS NOT NULL AND error IS NULL ORDER BY finished_at DESC, id DESC"
        + firstRows("1");
  }

  /** Parameters: schedule_slot. Columns: count. */
  String countRunsInSlotSql() {
    return "SELECT COUNT(*) FROM outbox_reconciliation_run WHERE schedule_slot = ?";
  }

  /**
   * Parameters: run_id. Columns: operation_id, message_id, destination, state, category, sent_at,
   * confirmed_count, last_error, action; by category, then operation ID.
   */
  String itemsSql() {
    return "SELECT operation_id, message_id, destination, state, category, sent_at, confirmed_count,"
        + " last_error, action FROM outbox_reconciliation_item WHERE run_id = ?"
        + " ORDER BY category, operation_id, id";
  }

  // ---- fleet lock ----------------------------------------------------------------------------

  /**
   * Takes an existing lock whose lease expired, or extends our own. Parameters: owner, lease
   * millis, name, owner.
   */
  String takeLockSql() {
    return "UPDATE outbox_lock SET owner = ?, lease_until = "
        + nowPlusMillisParam()
        + ","
        + " acquired_at = "
        + now()
        + " WHERE name = ? AND (lease_until < "
        + now()
        + " OR owner = ?)";
  }

  /**
   * Creates a lock that does not exist yet; 0 rows (or a unique violation) when it does.
   * Parameters: name, owner, lease millis. Default: a plain INSERT, whose loser's unique violation
   * the store reads as "taken".
   */
  String insertLockSql() {
    return "INSERT INTO outbox_lock (name, owner, lease_until, acquired_at) VALUES (?, ?, "
        + nowPlusMillisParam()
        + ", "
        + now()
        + ")";
  }

  /** Extends our own, unexpired lease. Parameters: lease millis, name, owner. */
  String renewLockSql() {
    return "UPDATE outbox_lock SET lease_until = "
        + nowPlusMillisParam()
        + " WHERE name = ? AND owner = ? AND lease_until >= "
        + now();
  }

  /** Ends our lease now. Parameters: name, owner. */
  String releaseLockSql() {
    return "UPDATE outbox_lock SET lease_until = " + now() + " WHERE name = ? AND owner = ?";
  }

  /** Parameters: name. Columns: owner, lease_until, database now. */
  String lockHolderSql() {
    return "SELECT owner, lease_until, " + now() + " FROM outbox_lock WHERE name = ?";
  }
}
