package dev.outboxrelay.outbox.store.dialect;

/**
 * MariaDB 10.6+ (InnoDB). Times are UTC {@code DATETIME(3)} from {@code UTC_TIMESTAMP(3)}, as in
 * {@link MariaDbOutboxDialect}.
 */
public class MariaDbReconciliationDialect extends ReconciliationDialect {

  @Override
  public String name() {
    return "mariadb";
  }

  @Override
  protected String now() {
    // UTC whatever the session time zone; CURRENT_TIMESTAMP/NOW() would follow time_zone.
    return "UTC_TIMESTAMP(3)";
  }

  @Override
  protected String nowPlusMillisParam() {
    return "TIMESTAMPADD(MICROSECOND, CAST(? AS SIGNED) * 1000, UTC_TIMESTAMP(3))";
  }

  @Override
  protected String timestampType() {
    return "DATETIME(3)";
  }

  @Override
  protected String nullOf(String type) {
    // CAST knows no BIGINT or VARCHAR (outside Oracle mode): SIGNED and CHAR(n) instead.
    return "CAST(NULL AS " + switch (type) {
      case "BIGINT", "INTEGER" -> "SIGNED";
      case "VARCHAR(2000)" -> "CHAR(2000)";
      default -> type;
    } + ")";
  }

  @Override
  public String upsertConfirmationSql() {
    // No ON CONFLICT: ON DUPLICATE KEY UPDATE on uq_outbox_confirmation_operation, the only
    // unique key besides the generated id.
    return "INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at, applied_count,"
        + " source) VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE"
        + " confirmed_at = VALUES(confirmed_at), applied_count = VALUES(applied_count),"
        + " source = VALUES(source), recorded_at = UTC_TIMESTAMP(3)";
  }

  @Override
  public String insertLockSql() {
    // A plain INSERT (no INSERT IGNORE, which hides other errors): the store reads the loser's
    // duplicate key (1062) as "taken".
    return "INSERT INTO outbox_lock (name, owner, lease_until, acquired_at) VALUES (?, ?, "
        + nowPlusMillisParam() + ", UTC_TIMESTAMP(3))";
  }

  @Override
  public String releaseLockSql() {
    // A millisecond clock: a lease ending "now" would stay live for the rest of this millisecond
    // (taking needs lease_until < now), so a release ends it one millisecond ago.
    return "UPDATE outbox_lock SET lease_until = TIMESTAMPADD(MICROSECOND, -1000, UTC_TIMESTAMP(3))"
        + " WHERE name = ? AND owner = ?";
  }
}
