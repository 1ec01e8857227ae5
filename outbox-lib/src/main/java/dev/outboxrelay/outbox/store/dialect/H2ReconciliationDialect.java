package dev.outboxrelay.outbox.store.dialect;

/** H2 2.x. */
public class H2ReconciliationDialect extends ReconciliationDialect {

  @Override
  public String name() {
    return "h2";
  }

  @Override
  protected String now() {
    return "CURRENT_TIMESTAMP";
  }

  @Override
  protected String nowPlusMillisParam() {
    // H2 cannot infer a parameter's type inside DATEADD.
    return "DATEADD(MILLISECOND, CAST(? AS BIGINT), CURRENT_TIMESTAMP)";
  }

  @Override
  protected String timestampType() {
    return "TIMESTAMP WITH TIME ZONE";
  }

  @Override
  public String upsertConfirmationSql() {
    // No ON CONFLICT outside PostgreSQL mode; a standard MERGE with typed source values instead.
    return "MERGE INTO outbox_confirmation c USING (VALUES (CAST(? AS VARCHAR(200)),"
        + " CAST(? AS VARCHAR(200)), CAST(? AS TIMESTAMP WITH TIME ZONE), CAST(? AS INTEGER),"
        + " CAST(? AS VARCHAR(200)))) v (operation_id, destination, confirmed_at, applied_count, source)"
        + " ON c.operation_id = v.operation_id AND c.destination = v.destination"
        + " WHEN MATCHED THEN UPDATE SET confirmed_at = v.confirmed_at,"
        + " applied_count = v.applied_count, source = v.source, recorded_at = CURRENT_TIMESTAMP"
        + " WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)"
        + " VALUES (v.operation_id, v.destination, v.confirmed_at, v.applied_count, v.source)";
  }

  @Override
  public String insertLockSql() {
    // A plain INSERT: the store reads the loser's unique violation (23505) as "taken".
    return "INSERT INTO outbox_lock (name, owner, lease_until, acquired_at) VALUES (?, ?, "
        + nowPlusMillisParam() + ", CURRENT_TIMESTAMP)";
  }
}
