package dev.outboxrelay.outbox.store.dialect;

import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

/**
 * MariaDB 10.6+ on InnoDB (10.6 brought {@code FOR UPDATE SKIP LOCKED}). Times are UTC {@code
 * DATETIME(3)} from {@code UTC_TIMESTAMP(3)}; claim tokens are {@code CHAR(36)} text.
 */
public class MariaDbOutboxDialect extends OutboxDialect {
  /** ER_DUP_ENTRY. */
  private static final int DUPLICATE_KEY = 1062;
  /** ER_LOCK_DEADLOCK: InnoDB rolled the victim's whole transaction back. */
  private static final int DEADLOCK = 1213;

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
  public String insertIfAbsentSql() {
    // INSERT ... RETURNING exists since 10.5; a duplicate key (1062) fails only this statement,
    // not the caller's transaction, so the store treats it as "exists" (as on H2). No INSERT
    // IGNORE: it would also turn overlong values and other errors into silent warnings.
    return "INSERT INTO outbox_message (operation_id, destination, ordering_key, payload,"
        + " content_type, headers, deliver_after, payload_by_ref, key_wait) VALUES (?, ?, ?, ?, ?, ?, "
        + nowPlusMillisParam() + ", ?, ?) RETURNING id";
  }

  @Override
  public String lockUnfinishedSql() {
    return "SELECT id FROM outbox_message WHERE id = ? AND state IN ('R', 'W') LOCK IN SHARE MODE";
  }

  @Override
  public boolean isUniqueViolation(SQLException e) {
    return e.getErrorCode() == DUPLICATE_KEY;
  }

  @Override
  public boolean isRetryableConflict(SQLException e) {
    return e.getErrorCode() == DEADLOCK || "40001".equals(e.getSQLState());
  }

  // ---- binding -------------------------------------------------------------------------------

  @Override
  public void bindUuid(PreparedStatement ps, int index, UUID token) throws SQLException {
    if (token == null) {
      ps.setNull(index, Types.CHAR);
    } else {
      ps.setString(index, token.toString());
    }
  }

  @Override
  public UUID readUuid(ResultSet rs, int column) throws SQLException {
    String token = rs.getString(column);
    return token == null ? null : UUID.fromString(token);
  }

  @Override
  public void bindInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
    // DATETIME has no zone: the column holds UTC wall-clock time, bound without conversion.
    if (instant == null) {
      ps.setNull(index, Types.TIMESTAMP);
    } else {
      ps.setObject(index, LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
    }
  }

  @Override
  public Instant readInstant(ResultSet rs, int column) throws SQLException {
    LocalDateTime t = rs.getObject(column, LocalDateTime.class);
    return t == null ? null : t.toInstant(ZoneOffset.UTC);
  }

  @Override
  protected String instantParam() {
    return "CAST(? AS DATETIME(3))";
  }

  // ---- admin ---------------------------------------------------------------------------------

  @Override
  protected String updatePickedDead(String assignments, String pickIds) {
    // No LIMIT inside IN (error 1235) and no sub-query on the updated table (1093): the picked ids
    // join in as a derived table, which MariaDB materialises before it updates.
    return "UPDATE outbox_message JOIN (" + pickIds + ") picked ON picked.id = outbox_message.id "
        + assignments + " WHERE outbox_message.state = 'D'";
  }

  // ---- claim ---------------------------------------------------------------------------------

  // FORCE INDEX: left to itself the optimizer ranges over (state, deliver_after) and filesorts by
  // id, and a locking read that sorts locks every ready row before LIMIT applies, so one claimer
  // would hold the whole backlog and its peers would skip all of it. (state, key_wait, id) walks
  // ready heads in id order and stops after n.
  static final String LOCK_READY_SQL =
      "SELECT c.id FROM outbox_message c FORCE INDEX (ix_outbox_message_head)"
          + " WHERE " + readyHeadCondition("c", "FALSE") + " AND c.deliver_after <= UTC_TIMESTAMP(3)"
          + " ORDER BY c.id LIMIT ? FOR UPDATE SKIP LOCKED";

  /** Followed by the locked ids' placeholders, e.g. {@code (?, ?, ?)}. */
  private static final String UPDATE_LOCKED_SQL =
      "UPDATE outbox_message SET state = 'W', claim_token = ?,"
          + " lease_until = TIMESTAMPADD(MICROSECOND, CAST(? AS SIGNED) * 1000, UTC_TIMESTAMP(3)),"
          + " claimed_at = UTC_TIMESTAMP(3) WHERE state = 'R' AND id IN ";


  /**
   * MariaDB has no UPDATE ... RETURNING: lock the ids with {@code FOR UPDATE SKIP LOCKED}, update
   * exactly those, and read back the rows carrying this claim's token, in one short transaction.
   * READ COMMITTED for it: under InnoDB's default REPEATABLE READ the locking scan would also
   * take gap locks on the ready index and hold back concurrent enqueues until it commits.
   */
  @Override
  public <T> List<T> claim(Connection c, UUID token, long leaseMillis, int limit, RowMapper<T> mapper)
      throws SQLException {
    int isolation = c.getTransactionIsolation();
    c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    try {
      return JdbcTransactions.inTransaction(c, tx -> {
        List<Long> ids;
        try (PreparedStatement ps = tx.prepareStatement(LOCK_READY_SQL)) {
          ps.setInt(1, limit);
          ids = readAll(ps, rs -> rs.getLong(1));
        }
        if (ids.isEmpty()) {
          return List.<T>of();
        }
        String in = "(" + String.join(", ", Collections.nCopies(ids.size(), "?")) + ")";
        try (PreparedStatement ps = tx.prepareStatement(UPDATE_LOCKED_SQL + in)) {
          bindUuid(ps, 1, token);
          ps.setLong(2, leaseMillis);
          for (int i = 0; i < ids.size(); i++) {
            ps.setLong(3 + i, ids.get(i));
          }
          ps.executeUpdate();
        }
        try (PreparedStatement ps = tx.prepareStatement(readClaimedSql(ids.size()))) {
          bindUuid(ps, 1, token);
          for (int i = 0; i < ids.size(); i++) {
            ps.setLong(2 + i, ids.get(i));
          }
          return readAll(ps, mapper);
        }
      });
    } finally {
      c.setTransactionIsolation(isolation);
    }
  }

  // ---- retention -----------------------------------------------------------------------------

  @Override
  public BoundSql deleteFinished(long keepMillis, int limit) {
    // No LIMIT inside IN (1235): the picked ids join in as a derived table, read without locks
    // (the store runs this in READ COMMITTED), so only the rows deleted are locked, by primary key,
    // not every row a DELETE ... ORDER BY id LIMIT n would scan on its way.
    return new BoundSql("DELETE m FROM outbox_message m JOIN (SELECT f.id FROM outbox_message f WHERE "
        + finishedBeforeCondition("f") + " ORDER BY f.id LIMIT ?) picked ON picked.id = m.id"
        + " WHERE m.state IN ('S', 'C')", List.of(-keepMillis, limit));
  }
}
