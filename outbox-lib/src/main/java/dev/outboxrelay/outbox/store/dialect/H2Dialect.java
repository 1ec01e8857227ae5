package dev.outboxrelay.outbox.store.dialect;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/** H2 2.x, the embedded default (also in server mode, so several processes can share it). */
public final class H2Dialect extends Dialect {

  static final SqlClock CLOCK =
      new SqlClock(
          "CURRENT_TIMESTAMP",
          "CURRENT_TIMESTAMP",
          // H2 cannot infer a parameter's type inside DATEADD.
          base -> "DATEADD(MILLISECOND, CAST(? AS BIGINT), " + base + ")",
          "TIMESTAMP WITH TIME ZONE",
          "CAST(? AS TIMESTAMP WITH TIME ZONE)");

  /**
   * Unique violation (23505); a deadlock victim (40001: H2 rolled its whole transaction back); a
   * lock wait that timed out (HYT00).
   */
  static final ErrorCodes ERRORS =
      new ErrorCodes(
          Set.of("23505"), Set.of(), Set.of("40001"), Set.of(), Set.of("HYT00"), Set.of());

  public H2Dialect() {
    super("h2", CLOCK, TypeBinding.NATIVE, ERRORS);
  }

  @Override
  String insertIfAbsentSql() {
    // No ON CONFLICT outside PostgreSQL mode; a unique violation only fails the statement in H2,
    // not the caller's transaction, so the store treats 23505 as "exists".
    return "SELECT id FROM FINAL TABLE (INSERT INTO outbox_message (operation_id, destination,"
        + " ordering_key, payload, content_type, headers, deliver_after, payload_by_ref, key_wait) VALUES"
        + " (?, ?, ?, ?, ?, ?, "
        + nowPlusMillisParam()
        + ", ?, ?))";
  }

  /** H2 has no shared row locks: enqueues behind the same job take turns. */
  @Override
  String lockUnfinishedSql() {
    return "SELECT id FROM outbox_message WHERE id = ? AND state IN ('R', 'W') FOR UPDATE";
  }

  // ---- claim: H2 allows no FOR UPDATE inside a sub-query, so lock first, then update the locked
  // ids and read the changed rows back through a delta table, all in one short transaction -----

  @Override
  boolean claimLocksFirst() {
    return true;
  }

  @Override
  String lockReadySql() {
    return "SELECT c.id FROM outbox_message c WHERE "
        + readyHeadCondition("c", keyWaitFalse())
        + " AND c.deliver_after <= "
        + now()
        + " ORDER BY c.id LIMIT ? FOR UPDATE SKIP LOCKED";
  }

  /** The locked ids as one array parameter: one prepared statement whatever their number. */
  @Override
  BoundSql claimLocked(UUID token, long leaseMillis, List<Long> ids) {
    return new BoundSql(
        "SELECT "
            + CLAIM_COLUMNS
            + " FROM FINAL TABLE (UPDATE outbox_message SET state = 'W',"
            + " claim_token = ?, lease_until = "
            + nowPlusMillisParam()
            + ","
            + " claimed_at = "
            + now()
            + " WHERE id = ANY(?) AND state = 'R') ORDER BY id",
        List.of(token, leaseMillis, ids.toArray(new Long[0])));
  }

  // ---- batched completion and heartbeat: the changed rows come back through a delta table ----

  @Override
  BoundSql markDeliveredAll(List<Long> ids, List<UUID> tokens) {
    return new BoundSql(
        "SELECT id FROM FINAL TABLE (UPDATE outbox_message m "
            + deliveredAssignments()
            + " WHERE m.state = 'W' AND "
            + tokenPairsCondition("m", ids.size())
            + ")",
        tokenPairs(ids, tokens));
  }

  @Override
  BoundSql renewLeases(List<Long> ids, List<UUID> tokens, long leaseMillis) {
    List<Object> params = new ArrayList<>();
    params.add(leaseMillis);
    params.addAll(tokenPairs(ids, tokens));
    return new BoundSql(
        "SELECT id FROM FINAL TABLE (UPDATE outbox_message m"
            + " SET lease_until = "
            + nowPlusMillisParam()
            + " WHERE m.state = 'W' AND "
            + tokenPairsCondition("m", ids.size())
            + ")",
        params);
  }

  // ---- retention -----------------------------------------------------------------------------

  @Override
  BoundSql pickFinished(long keepMillis, int limit) {
    // No SKIP LOCKED: a plain read, and the delete by id checks the condition again. Claims never
    // lock S/C rows, so the delete can only wait briefly on a reconciliation move of the same row.
    return new BoundSql(
        "SELECT f.id FROM outbox_message f WHERE "
            + finishedBeforeCondition("f")
            + " ORDER BY f.id FETCH FIRST ? ROWS ONLY",
        List.of(-keepMillis, limit));
  }

  // ---- reconciliation ------------------------------------------------------------------------

  @Override
  String upsertConfirmationSql() {
    // No ON CONFLICT outside PostgreSQL mode; a standard MERGE with typed source values instead.
    return "MERGE INTO outbox_confirmation c USING (VALUES (CAST(? AS VARCHAR(200)),"
        + " CAST(? AS VARCHAR(200)), CAST(? AS TIMESTAMP WITH TIME ZONE), CAST(? AS INTEGER),"
        + " CAST(? AS VARCHAR(200)))) v (operation_id, destination, confirmed_at, applied_count, source)"
        + " ON c.operation_id = v.operation_id AND c.destination = v.destination"
        + " WHEN MATCHED THEN UPDATE SET confirmed_at = v.confirmed_at,"
        + " applied_count = v.applied_count, source = v.source, recorded_at = "
        + now()
        + " WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)"
        + " VALUES (v.operation_id, v.destination, v.confirmed_at, v.applied_count, v.source)";
  }

  // ---- inbox ---------------------------------------------------------------------------------

  @Override
  String inboxConfirmSql() {
    return "MERGE INTO outbox_confirmation c USING (VALUES (CAST(? AS VARCHAR(200)),"
        + " CAST(? AS VARCHAR(200)), CAST(? AS VARCHAR(200)))) v (op, dest, src)"
        + " ON c.operation_id = v.op AND c.destination = v.dest"
        + " WHEN MATCHED THEN UPDATE SET applied_count = c.applied_count + 1"
        + " WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)"
        + " VALUES (v.op, v.dest, "
        + now()
        + ", 1, v.src)";
  }

  @Override
  String inboxDeleteBatchSql() {
    return "DELETE FROM outbox_inbox WHERE id IN (SELECT id FROM outbox_inbox WHERE applied_at < ?"
        + " ORDER BY applied_at FETCH FIRST ? ROWS ONLY)";
  }
}
