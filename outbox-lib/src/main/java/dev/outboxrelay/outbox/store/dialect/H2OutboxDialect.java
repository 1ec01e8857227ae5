package dev.outboxrelay.outbox.store.dialect;

import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

/** H2 2.x, the embedded default (also in server mode, so several processes can share it). */
public class H2OutboxDialect extends OutboxDialect {

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
  public String insertIfAbsentSql() {
    // No ON CONFLICT outside PostgreSQL mode; a unique violation only fails the statement in H2,
    // not the caller's transaction, so the store treats 23505 as "exists".
    return "SELECT id FROM FINAL TABLE (INSERT INTO outbox_message (operation_id, destination,"
        + " ordering_key, payload, content_type, headers, deliver_after, payload_by_ref, key_wait) VALUES"
        + " (?, ?, ?, ?, ?, ?, " + nowPlusMillisParam() + ", ?, ?))";
  }

  /** H2 has no shared row locks: enqueues behind the same job take turns. */
  @Override
  public String lockUnfinishedSql() {
    return "SELECT id FROM outbox_message WHERE id = ? AND state IN ('R', 'W') FOR UPDATE";
  }

  private static final String LOCK_READY_SQL =
      "SELECT c.id FROM outbox_message c WHERE " + readyHeadCondition("c", "FALSE")
          + " AND c.deliver_after <= CURRENT_TIMESTAMP ORDER BY c.id LIMIT ? FOR UPDATE SKIP LOCKED";

  // H2 allows no FOR UPDATE inside a sub-query: lock first, then update the locked ids and read
  // the changed rows back through a delta table, all in one short transaction.
  private static final String CLAIM_LOCKED_SQL =
      "SELECT " + CLAIM_COLUMNS + " FROM FINAL TABLE (UPDATE outbox_message SET state = 'W',"
          + " claim_token = ?, lease_until = DATEADD(MILLISECOND, CAST(? AS BIGINT), CURRENT_TIMESTAMP),"
          + " claimed_at = CURRENT_TIMESTAMP WHERE id = ANY(?) AND state = 'R') ORDER BY id";

  @Override
  public <T> List<T> claim(Connection c, UUID token, long leaseMillis, int limit, RowMapper<T> mapper)
      throws SQLException {
    return JdbcTransactions.inTransaction(c, tx -> {
      List<Long> ids;
      try (PreparedStatement ps = tx.prepareStatement(LOCK_READY_SQL)) {
        ps.setInt(1, limit);
        ids = readAll(ps, rs -> rs.getLong(1));
      }
      if (ids.isEmpty()) {
        return List.<T>of();
      }
      try (PreparedStatement ps = tx.prepareStatement(CLAIM_LOCKED_SQL)) {
        ps.setObject(1, token);
        ps.setLong(2, leaseMillis);
        ps.setObject(3, ids.toArray(new Long[0]));
        return readAll(ps, mapper);
      }
    });
  }

  // ---- batched completion --------------------------------------------------------------------

  /** The changed rows come back through a delta table. Parameters: as {@link #tokenPairsCondition}. */
  @Override
  public String markDeliveredAllSql(int pairs) {
    return "SELECT id FROM FINAL TABLE (UPDATE outbox_message m " + deliveredAssignments()
        + " WHERE m.state = 'W' AND " + tokenPairsCondition("m", pairs) + ")";
  }

  @Override
  public List<Long> markDeliveredAll(Connection tx, List<Long> ids, List<UUID> tokens) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(markDeliveredAllSql(ids.size()))) {
      bindTokenPairs(ps, 1, ids, tokens);
      return readAll(ps, rs -> rs.getLong(1));
    }
  }

  /** The renewed rows come back through a delta table. */
  @Override
  public List<Long> renewLeases(Connection tx, List<Long> ids, List<UUID> tokens, long leaseMillis)
      throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement("SELECT id FROM FINAL TABLE (UPDATE outbox_message m"
        + " SET lease_until = " + nowPlusMillisParam() + " WHERE m.state = 'W' AND "
        + tokenPairsCondition("m", ids.size()) + ")")) {
      ps.setLong(1, leaseMillis);
      bindTokenPairs(ps, 2, ids, tokens);
      return readAll(ps, rs -> rs.getLong(1));
    }
  }

  // ---- retention -----------------------------------------------------------------------------

  @Override
  public BoundSql deleteFinished(long keepMillis, int limit) {
    // No FOR UPDATE in a sub-query and no SKIP LOCKED on DELETE: a plain bounded DELETE. Claims
    // never lock S/C rows, so it can only wait briefly on a reconciliation move of the same row.
    return new BoundSql("DELETE FROM outbox_message f WHERE " + finishedBeforeCondition("f")
        + " FETCH FIRST ? ROWS ONLY", List.of(-keepMillis, limit));
  }
}
