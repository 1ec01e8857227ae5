package dev.outboxrelay.outbox.store.dialect;

/** PostgreSQL 12+. */
public class PostgresReconciliationDialect extends ReconciliationDialect {

  @Override
  public String name() {
    return "postgresql";
  }

  @Override
  protected String now() {
    return "now()";
  }

  @Override
  protected String nowPlusMillisParam() {
    // bigint * interval has no operator; double precision * interval does.
    return "(now() + CAST(? AS DOUBLE PRECISION) * INTERVAL '1 millisecond')";
  }

  @Override
  protected String timestampType() {
    return "TIMESTAMPTZ";
  }

  @Override
  public String upsertConfirmationSql() {
    return "INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at, applied_count,"
        + " source) VALUES (?, ?, ?, ?, ?) ON CONFLICT (operation_id, destination) DO UPDATE SET"
        + " confirmed_at = EXCLUDED.confirmed_at, applied_count = EXCLUDED.applied_count,"
        + " source = EXCLUDED.source, recorded_at = now()";
  }

  @Override
  public String insertLockSql() {
    // ON CONFLICT instead of catching 23505: the loser sees 0 rows, not an error.
    return "INSERT INTO outbox_lock (name, owner, lease_until, acquired_at) VALUES (?, ?, "
        + nowPlusMillisParam() + ", now()) ON CONFLICT (name) DO NOTHING";
  }
}
