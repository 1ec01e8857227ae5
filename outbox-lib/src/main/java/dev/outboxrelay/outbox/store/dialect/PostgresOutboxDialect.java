package dev.outboxrelay.outbox.store.dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/** PostgreSQL 12+. */
public class PostgresOutboxDialect extends OutboxDialect {

  @Override
  public String name() {
    return "postgresql";
  }

  /** The V4 migration's trigger notifies {@code outbox_ready} with the schema at each insert. */
  @Override
  public java.util.Optional<ReadyNotifications> readyNotifications() {
    return java.util.Optional.of(ReadyNotifications.POSTGRESQL);
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
  public String insertIfAbsentSql() {
    // ON CONFLICT instead of catching 23505: a failed statement would abort the caller's transaction.
    return "INSERT INTO outbox_message (operation_id, destination, ordering_key, payload,"
        + " content_type, headers, deliver_after, payload_by_ref) VALUES (?, ?, ?, ?, ?, ?, "
        + nowPlusMillisParam() + ", ?) ON CONFLICT (operation_id) DO NOTHING RETURNING id";
  }

  /**
   * One statement: the CTE locks up to {@code limit} candidates, skipping rows other claimers
   * hold; the UPDATE re-checks {@code state} and RETURNING yields exactly the rows changed. Not
   * {@code WHERE id IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED)}: the planner may run that
   * sub-select more than once (e.g. as the inner side of a join) and claim more than n rows; a
   * locking CTE is evaluated exactly once.
   */
  static final String CLAIM_SQL =
      "WITH candidate AS (SELECT c.id FROM outbox_message c"
          + "   WHERE c.state = 'R' AND c.deliver_after <= now() AND " + keyHeadCondition("c")
          + "   ORDER BY c.id LIMIT ? FOR UPDATE OF c SKIP LOCKED)"
          + " UPDATE outbox_message m SET state = 'W', claim_token = ?,"
          + " lease_until = (now() + CAST(? AS DOUBLE PRECISION) * INTERVAL '1 millisecond'),"
          + " claimed_at = now()"
          + " FROM candidate WHERE m.id = candidate.id AND m.state = 'R'"
          + " RETURNING " + prefixed("m.", CLAIM_COLUMNS);

  private static String prefixed(String prefix, String columns) {
    return prefix + columns.replace(", ", ", " + prefix);
  }

  @Override
  public <T> List<T> claim(Connection c, UUID token, long leaseMillis, int limit, RowMapper<T> mapper)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CLAIM_SQL)) {
      ps.setInt(1, limit);
      ps.setObject(2, token);
      ps.setLong(3, leaseMillis);
      return readAll(ps, mapper);
    }
  }

  // ---- retention -----------------------------------------------------------------------------

  @Override
  public BoundSql deleteFinished(long keepMillis, int limit) {
    // A locking CTE, not IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED): see CLAIM_SQL, the planner
    // may re-run such a sub-select per row and delete more than a batch.
    return new BoundSql("WITH picked AS (SELECT f.id FROM outbox_message f WHERE "
        + finishedBeforeCondition("f") + " ORDER BY f.id LIMIT ? FOR UPDATE OF f SKIP LOCKED)"
        + " DELETE FROM outbox_message m USING picked WHERE m.id = picked.id",
        List.of(-keepMillis, limit));
  }
}
