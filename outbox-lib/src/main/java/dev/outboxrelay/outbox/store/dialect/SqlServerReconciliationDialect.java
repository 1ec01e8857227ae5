package dev.outboxrelay.outbox.store.dialect;

/**
 * SQL Server 2017+. Times are UTC {@code datetime2(3)} from {@code SYSUTCDATETIME()}, as in {@link
 * SqlServerOutboxDialect}.
 */
public class SqlServerReconciliationDialect extends ReconciliationDialect {

  // DATEADD takes no bigint (8116) and an int of milliseconds overflows past 24.8 days: days and
  // milliseconds of the one bigint parameter, split inside a scalar sub-query.
  private static final String NOW_PLUS_MILLIS =
      "(SELECT DATEADD(MILLISECOND, CAST(p.ms % 86400000 AS INT),"
          + " DATEADD(DAY, CAST(p.ms / 86400000 AS INT), SYSUTCDATETIME()))"
          + " FROM (SELECT CAST(? AS BIGINT) AS ms) p)";

  @Override
  public String name() {
    return "sqlserver";
  }

  @Override
  protected String now() {
    return "SYSUTCDATETIME()";
  }

  @Override
  protected String nowPlusMillisParam() {
    return NOW_PLUS_MILLIS;
  }

  @Override
  protected String timestampType() {
    return "DATETIME2(3)";
  }

  @Override
  protected String firstRows(String rows) {
    // No LIMIT: OFFSET/FETCH after the ORDER BY.
    return " OFFSET 0 ROWS FETCH NEXT " + rows + " ROWS ONLY";
  }

  @Override
  public String upsertConfirmationSql() {
    // MERGE alone is not atomic against a concurrent insert of the same key: HOLDLOCK keeps the
    // key range locked from the match to the insert. A MERGE must end with a semicolon.
    return "MERGE INTO outbox_confirmation WITH (HOLDLOCK) AS c"
        + " USING (SELECT ? AS operation_id, ? AS destination, ? AS confirmed_at, ? AS applied_count,"
        + " ? AS source) v ON c.operation_id = v.operation_id AND c.destination = v.destination"
        + " WHEN MATCHED THEN UPDATE SET confirmed_at = v.confirmed_at,"
        + " applied_count = v.applied_count, source = v.source, recorded_at = SYSUTCDATETIME()"
        + " WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)"
        + " VALUES (v.operation_id, v.destination, v.confirmed_at, v.applied_count, v.source);";
  }

  @Override
  public String insertLockSql() {
    // A plain INSERT: the store reads the loser's unique violation (2627) as "taken".
    return "INSERT INTO outbox_lock (name, owner, lease_until, acquired_at) VALUES (?, ?, "
        + NOW_PLUS_MILLIS + ", SYSUTCDATETIME())";
  }

  @Override
  public String releaseLockSql() {
    // datetime2(3) rounds SYSUTCDATETIME() to the millisecond, possibly up: a lease ending "now"
    // could still be live a moment later (taking needs lease_until < now), so end it 1 ms ago.
    return "UPDATE outbox_lock SET lease_until = DATEADD(MILLISECOND, -1, SYSUTCDATETIME())"
        + " WHERE name = ? AND owner = ?";
  }
}
