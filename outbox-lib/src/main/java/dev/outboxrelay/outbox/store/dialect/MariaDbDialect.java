package dev.outboxrelay.outbox.store.dialect;

import java.sql.Connection;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.UUID;

/**
 * MariaDB 10.6+ on InnoDB (10.6 brought {@code FOR UPDATE SKIP LOCKED}). Times are UTC {@code
 * DATETIME(3)} from {@code UTC_TIMESTAMP(3)}; claim tokens are {@code CHAR(36)} text. No {@code
 * UPDATE ... RETURNING}: a batch locks its rows, then changes exactly those.
 */
public final class MariaDbDialect extends Dialect {

  /**
   * UTC whatever the session time zone; CURRENT_TIMESTAMP/NOW() would follow time_zone. Per
   * statement.
   */
  static final SqlClock CLOCK =
      new SqlClock(
          "UTC_TIMESTAMP(3)",
          "UTC_TIMESTAMP(3)",
          base -> "TIMESTAMPADD(MICROSECOND, CAST(? AS SIGNED) * 1000, " + base + ")",
          "DATETIME(3)",
          "CAST(? AS DATETIME(3))");

  /**
   * ER_DUP_ENTRY (1062); ER_LOCK_DEADLOCK (1213: InnoDB rolled the victim's whole transaction back)
   * and serialization failures; ER_LOCK_WAIT_TIMEOUT (1205).
   */
  static final ErrorCodes ERRORS =
      new ErrorCodes(Set.of(), Set.of(1062), Set.of("40001"), Set.of(1213), Set.of(), Set.of(1205));

  public MariaDbDialect() {
    super("mariadb", CLOCK, TypeBinding.utcText(Types.CHAR), ERRORS);
  }

  /**
   * READ COMMITTED for the claim and retention: under InnoDB's default REPEATABLE READ a locking
   * scan, and the rows a DML statement's sub-select reads, take (next-key) gap locks that would
   * hold back claims and enqueues until the transaction ends.
   */
  @Override
  public OptionalInt lockingReadIsolation() {
    return OptionalInt.of(Connection.TRANSACTION_READ_COMMITTED);
  }

  @Override
  boolean updateReturnsRows() {
    return false;
  }

  @Override
  String insertIfAbsentSql() {
    // INSERT ... RETURNING exists since 10.5; a duplicate key (1062) fails only this statement,
    // not the caller's transaction, so the store treats it as "exists" (as on H2). No INSERT
    // IGNORE: it would also turn overlong values and other errors into silent warnings.
    return "INSERT INTO outbox_message (operation_id, destination, ordering_key, payload,"
        + " content_type, headers, deliver_after, payload_by_ref, key_wait) VALUES (?, ?, ?, ?, ?, ?, "
        + nowPlusMillisParam()
        + ", ?, ?) RETURNING id";
  }

  @Override
  String lockUnfinishedSql() {
    return "SELECT id FROM outbox_message WHERE id = ? AND state IN ('R', 'W') LOCK IN SHARE MODE";
  }

  // ---- claim: lock the ids, update exactly those, read back the rows carrying the token ------

  @Override
  boolean claimLocksFirst() {
    return true;
  }

  // FORCE INDEX: left to itself the optimizer ranged over (state, deliver_after) (an index V8
  // dropped) and filesorted by id, and a locking read that sorts locks every ready row before LIMIT
  // applies, so one claimer would hold the whole backlog and its peers would skip all of it.
  // (state, key_wait, id) walks ready heads in id order and stops after n.
  @Override
  String lockReadySql() {
    return "SELECT c.id FROM outbox_message c FORCE INDEX (ix_outbox_message_head)"
        + " WHERE "
        + readyHeadCondition("c", keyWaitFalse())
        + " AND c.deliver_after <= "
        + now()
        + " ORDER BY c.id LIMIT ? FOR UPDATE SKIP LOCKED";
  }

  @Override
  BoundSql claimLocked(UUID token, long leaseMillis, List<Long> ids) {
    List<Object> params = new ArrayList<>(List.of(token, leaseMillis));
    params.addAll(ids);
    return new BoundSql(
        "UPDATE outbox_message SET state = 'W', claim_token = ?,"
            + " lease_until = "
            + nowPlusMillisParam()
            + ","
            + " claimed_at = "
            + now()
            + " WHERE state = 'R' AND id IN "
            + placeholders(ids.size()),
        params);
  }

  // ---- admin ---------------------------------------------------------------------------------

  @Override
  String updatePickedDead(String assignments, String pickIds) {
    // No LIMIT inside IN (error 1235) and no sub-query on the updated table (1093): the picked ids
    // join in as a derived table, which MariaDB materialises before it updates.
    return "UPDATE outbox_message JOIN ("
        + pickIds
        + ") picked ON picked.id = outbox_message.id "
        + assignments
        + " WHERE outbox_message.state = 'D'";
  }

  // ---- retention -----------------------------------------------------------------------------

  @Override
  BoundSql pickFinished(long keepMillis, int limit) {
    // A read without locks (at READ COMMITTED, lockingReadIsolation), so only the rows deleted are
    // locked, by primary key, when the delete by id checks the condition again; not every row a
    // DELETE ... ORDER BY id LIMIT n would scan on its way.
    return new BoundSql(
        "SELECT f.id FROM outbox_message f WHERE "
            + finishedBeforeCondition("f")
            + " ORDER BY f.id LIMIT ?",
        List.of(-keepMillis, limit));
  }

  // ---- reconciliation ------------------------------------------------------------------------

  @Override
  String nullOf(String type) {
    // CAST knows no BIGINT or VARCHAR (outside Oracle mode): SIGNED and CHAR(n) instead.
    return "CAST(NULL AS "
        + switch (type) {
          case "BIGINT", "INTEGER" -> "SIGNED";
          case "VARCHAR(2000)" -> "CHAR(2000)";
          default -> type;
        }
        + ")";
  }

  @Override
  String upsertConfirmationSql() {
    // No ON CONFLICT: ON DUPLICATE KEY UPDATE on uq_outbox_confirmation_operation, the only
    // unique key besides the generated id.
    return "INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at, applied_count,"
        + " source) VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE"
        + " confirmed_at = VALUES(confirmed_at), applied_count = VALUES(applied_count),"
        + " source = VALUES(source), recorded_at = "
        + now();
  }

  @Override
  String releaseLockSql() {
    // A millisecond clock: a lease ending "now" would stay live for the rest of this millisecond
    // (taking needs lease_until < now), so a release ends it one millisecond ago.
    return "UPDATE outbox_lock SET lease_until = TIMESTAMPADD(MICROSECOND, -1000, "
        + now()
        + ")"
        + " WHERE name = ? AND owner = ?";
  }

  // ---- inbox ---------------------------------------------------------------------------------

  @Override
  String inboxConfirmSql() {
    return "INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at, applied_count,"
        + " source) VALUES (?, ?, "
        + now()
        + ", 1, ?)"
        + " ON DUPLICATE KEY UPDATE applied_count = applied_count + 1";
  }

  @Override
  String inboxLimit() {
    return " LIMIT ?";
  }

  @Override
  String inboxDeleteBatchSql() {
    return "DELETE FROM outbox_inbox WHERE applied_at < ? ORDER BY applied_at LIMIT ?";
  }
}
