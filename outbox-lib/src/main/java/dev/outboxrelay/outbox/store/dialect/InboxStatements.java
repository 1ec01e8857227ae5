package dev.outboxrelay.outbox.store.dialect;

import java.time.Instant;

/**
 * The inbox's statements on one database ({@code outbox_inbox}, and the {@code outbox_confirmation}
 * rows it counts): everything the inbox sends to a database is here or in the {@code
 * db/inbox/<name>} scripts. Made by {@link Dialect#inbox}, rendered once. Parameters are documented
 * on the dialect's builder of each statement ({@link Dialect}).
 */
public final class InboxStatements {
  private final Dialect dialect;
  private final String insert;
  private final String lockRow;
  private final String countRepeat;
  private final String confirm;
  private final String deleteBatch;

  InboxStatements(Dialect dialect) {
    this.dialect = dialect;
    insert = dialect.inboxInsertSql();
    lockRow = dialect.inboxLockRowSql();
    countRepeat = dialect.inboxCountRepeatSql();
    confirm = dialect.inboxConfirmSql();
    deleteBatch = dialect.inboxDeleteBatchSql();
  }

  public Dialect dialect() {
    return dialect;
  }

  /** Inserts the inbox row; an existing row is 0 rows or a unique violation. */
  public String insertSql() {
    return insert;
  }

  /** The committed row of a key, locked. Parameters: destination, operation_id. */
  public String lockRowSql() {
    return lockRow;
  }

  /** Counts a repeat. Parameters: destination, operation_id. */
  public String countRepeatSql() {
    return countRepeat;
  }

  /** Stores the handler's outcome. Parameters: outcome, destination, operation_id. */
  public String outcomeSql() {
    return "UPDATE outbox_inbox SET outcome = ? WHERE destination = ? AND operation_id = ?";
  }

  /** The time the row was applied at. Parameters: destination, operation_id. */
  public String appliedAtSql() {
    return "SELECT applied_at FROM outbox_inbox WHERE destination = ? AND operation_id = ?";
  }

  /**
   * Counts one application in {@code outbox_confirmation}. Parameters: operation_id, destination,
   * source.
   */
  public String confirmSql() {
    return confirm;
  }

  /**
   * One ledger page: rows applied strictly after a time (or from the start), optionally of one
   * destination, in (applied_at, operation_id) order, at most n. Parameters: [time,] [destination,]
   * n.
   */
  public String ledgerSql(boolean after, boolean oneDestination) {
    return ledgerSelect(after, oneDestination, false) + dialect.inboxLimit();
  }

  /** Every row applied at exactly one time, optionally of one destination. */
  public String ledgerAtSql(boolean oneDestination) {
    return ledgerSelect(true, oneDestination, true);
  }

  /** Whether rows exist after a time. Parameters: time[, destination]. */
  public String ledgerMoreSql(boolean oneDestination) {
    return "SELECT COUNT(*) FROM outbox_inbox WHERE applied_at > ?"
        + (oneDestination ? " AND destination = ?" : "");
  }

  private static String ledgerSelect(boolean after, boolean oneDestination, boolean exact) {
    StringBuilder sql =
        new StringBuilder("SELECT " + Dialect.LEDGER_COLUMNS + " FROM outbox_inbox");
    String glue = " WHERE ";
    if (after) {
      sql.append(glue).append(exact ? "applied_at = ?" : "applied_at > ?");
      glue = " AND ";
    }
    if (oneDestination) {
      sql.append(glue).append("destination = ?");
    }
    return sql.append(" ORDER BY applied_at, operation_id").toString();
  }

  /** Deletes at most {@code n} rows applied before {@code before}, oldest first. */
  public BoundSql deleteBatch(Instant before, int n) {
    return new BoundSql(deleteBatch, dialect.inboxDeleteBatchParams(before, n));
  }

  /** Totals over the whole inbox: rows, deliveries. */
  public String totalsSql() {
    return "SELECT COUNT(*), COALESCE(SUM(deliveries), 0) FROM outbox_inbox";
  }

  @Override
  public String toString() {
    return dialect + " inbox";
  }
}
