package dev.outboxrelay.outbox.store.dialect;

import java.util.List;
import java.util.UUID;

/**
 * How a job enters and is taken: the enqueue, the ordering key's head (docs/design.md "Ordering
 * keys") and the claim, in the shape of each database ({@link JobStatements} hands them out).
 */
abstract class ClaimSql extends SqlFragments {

  ClaimSql(String name, SqlClock clock, TypeBinding binding, ErrorCodes errors) {
    super(name, clock, binding, errors);
  }

  // ---- enqueue -------------------------------------------------------------------------------

  /**
   * Inserts one job unless its operation ID exists; a query returning the new id, or no row (or a
   * unique violation) when it exists. Parameters: operation_id, destination, ordering_key, payload,
   * content_type, headers, delay millis, payload_by_ref, key_wait.
   */
  abstract String insertIfAbsentSql();

  // ---- key heads (docs/design.md "Ordering keys") --------------------------------------------

  /**
   * The latest unfinished ({@code R} or {@code W}) job of a key below an id, read without locks.
   * Parameters: ordering_key, id bound (exclusive). Columns: id; no row when there is none.
   * Default: one maximum per state, so an index on (ordering_key, state, id) answers each with one
   * seek (the store takes the larger).
   */
  String latestUnfinishedBelowSql() {
    return "SELECT MAX(id) FROM outbox_message WHERE ordering_key = ? AND state IN ('R', 'W') AND id < ?"
        + " GROUP BY state";
  }

  /**
   * The earliest unfinished job of a key: its head. Parameters: ordering_key. Columns: id; no row
   * when there is none (the store takes the smallest).
   */
  String earliestUnfinishedSql() {
    return "SELECT MIN(id) FROM outbox_message WHERE ordering_key = ? AND state IN ('R', 'W') GROUP BY state";
  }

  /**
   * Share-locks one job until the caller's transaction ends, if it is still unfinished: an enqueue
   * holds its key's latest unfinished job, so that job's final transition waits for the enqueue to
   * commit and then sees the new job. Parameters: id. Columns: id (no row: finished).
   */
  String lockUnfinishedSql() {
    return "SELECT id FROM outbox_message WHERE id = ? AND state IN ('R', 'W') FOR SHARE";
  }

  /**
   * Makes one job its key's head (no longer waiting) while it is unfinished; 0 rows means it
   * finished meanwhile and the next one is the head. Parameters: id.
   */
  String promoteHeadSql() {
    return "UPDATE outbox_message SET key_wait = "
        + keyWaitFalse()
        + " WHERE id = ? AND state IN ('R', 'W')";
  }

  /**
   * Stores the out-of-band body of a by-reference job just inserted, in the same transaction.
   * Parameters: message_id, body, size_bytes, sha256.
   */
  String insertPayloadSql() {
    return "INSERT INTO outbox_payload (message_id, body, size_bytes, sha256) VALUES (?, ?, ?, ?)";
  }

  /**
   * The size and digest of a stored body, without the body (an idempotent re-enqueue compares
   * these). Parameters: message_id. Columns: size_bytes, sha256.
   */
  String payloadDigestSql() {
    return "SELECT size_bytes, sha256 FROM outbox_payload WHERE message_id = ?";
  }

  /**
   * Removes a job inserted by the current enqueue whose body could not be stored, so that the
   * caller's transaction never holds a by-reference job without its body. Parameters: id.
   */
  String deleteInsertedMessageSql() {
    return "DELETE FROM outbox_message WHERE id = ?";
  }

  // ---- claim ---------------------------------------------------------------------------------

  /**
   * The claim's head condition on the candidate row aliased {@code row}: a ready job that does not
   * wait behind an earlier job of its key ({@code key_wait}, the index's condition), checked once
   * more against the key ({@link #keyHeadCondition}). {@code no} is the dialect's false literal.
   */
  static String readyHeadCondition(String row, String no) {
    return row + ".state = 'R' AND " + row + ".key_wait = " + no + " AND " + keyHeadCondition(row);
  }

  /**
   * The claim's FIFO-per-key condition on the candidate row aliased {@code row}: a job with an
   * ordering key is claimable only while no earlier job (lower id) of its key is ready or leased.
   * So one job per key is in flight, in id order, across relays and across retries (a job in
   * backoff is {@code R} and holds its key back); jobs without a key and other keys are not held
   * back. A dead job ({@code D}) does not block its key: later jobs go on, and the dead one waits,
   * visible, for an operator (see docs/library.md "Ordering keys"). With {@code key_wait} this is
   * one index probe per candidate: it only guards the rare job that does not wait although an
   * earlier one is unfinished (a replay, or two enqueues of a key at once).
   */
  static String keyHeadCondition(String row) {
    // One probe per state: on (ordering_key, state, id) each is a range bounded by the id, where
    // state IN ('R', 'W') would read every ready job of the key (MariaDB).
    return "("
        + row
        + ".ordering_key IS NULL OR ("
        + earlierIn(row, "R")
        + " AND "
        + earlierIn(row, "W")
        + "))";
  }

  private static String earlierIn(String row, String state) {
    return "NOT EXISTS (SELECT 1 FROM outbox_message earlier WHERE earlier.ordering_key = "
        + row
        + ".ordering_key AND earlier.state = '"
        + state
        + "' AND earlier.id < "
        + row
        + ".id)";
  }

  /**
   * Whether the claim locks its candidates first ({@link #lockReadySql}) and then claims them
   * ({@link #claimLocked}) in one short transaction; otherwise it is one statement ({@link
   * #claimSql}) run in auto-commit mode.
   */
  boolean claimLocksFirst() {
    return false;
  }

  /**
   * The one-statement claim: moves up to {@code limit} ready, due rows to {@code W} in one atomic
   * step and returns {@link #CLAIM_COLUMNS} of exactly the rows it changed. Parameters: {@link
   * #claimParams}.
   */
  String claimSql() {
    throw new UnsupportedOperationException(name + " claims in two steps");
  }

  /** The parameters of {@link #claimSql}, in its order. Default: token, lease millis, limit. */
  List<Object> claimParams(UUID token, long leaseMillis, int limit) {
    return List.of(token, leaseMillis, limit);
  }

  /**
   * The first step of a two-step claim: locks up to n ready, due heads, skipping rows other
   * claimers hold. Parameters: limit. Columns: id.
   */
  String lockReadySql() {
    throw new UnsupportedOperationException(name + " claims in one statement");
  }

  /**
   * The second step of a two-step claim: moves the locked ids to {@code W} under a token and lease;
   * returns the rows ({@link #CLAIM_COLUMNS}) where {@link #updateReturnsRows()}, else only changes
   * them (the store then reads them back, {@link #readClaimedSql}).
   */
  BoundSql claimLocked(UUID token, long leaseMillis, List<Long> ids) {
    throw new UnsupportedOperationException(name + " claims in one statement");
  }

  /**
   * Whether this database's updates can return the rows they changed ({@code RETURNING}, {@code
   * OUTPUT}, a delta table); otherwise a batch locks its rows first and then changes exactly those.
   */
  boolean updateReturnsRows() {
    return true;
  }

  /**
   * A key's run for the key-affine hand-over (docs/design.md "Ordering keys"), read in the
   * completion's transaction from the head it just promoted: the key's ready jobs from the head in
   * id order, each with whether it is due ({@code 1}/{@code 0}), and the key's first leased job
   * after the head; the store takes the ready, due jobs before the first that is not, or before
   * that leased job. Parameters: {@link #keyRunParams}. Columns: id, state, due. Default: two seeks
   * on the index (ordering_key, state, id), one per state, so neither walks the other state's rows.
   */
  String keyRunSql() {
    return "SELECT id, state, due FROM (SELECT id, state, "
        + dueFlag()
        + " AS due FROM outbox_message WHERE ordering_key = ? AND state = 'R' AND id >= ? ORDER BY id"
        + limitParam()
        + ") r UNION ALL SELECT id, state, 0 FROM (SELECT id, state FROM outbox_message"
        + " WHERE ordering_key = ? AND state = 'W' AND id > ? ORDER BY id"
        + firstRows("1")
        + ") w";
  }

  /**
   * Every key's {@link #promoteHeadSql} and {@link #keyRunSql} in one statement: makes the earliest
   * unfinished ({@code R} or {@code W}) job of each of {@code keys} its head, as {@link
   * #earliestUnfinishedSql} finds it and {@link #promoteHeadSql} changes it, and reads each key's
   * unfinished jobs from it, at most {@code limit} per key. Columns: ordering_key, id, state, due
   * (1/0), promoted (1 on a key's first row when its promotion changed the row, so it was still
   * unfinished), ordered by key and id. Null, the default: the store promotes and reads key by key,
   * three statements per key.
   */
  BoundSql promoteHeadsWithRuns(List<String> keys, int limit) {
    return null;
  }

  /** The parameters of {@link #keyRunSql}, in its order. Default: key, head, limit, key, head. */
  List<Object> keyRunParams(String key, long head, int limit) {
    return List.of(key, head, limit, key, head);
  }

  /** {@code 1} when the row's {@code deliver_after} has come (by the statement's clock), else 0. */
  String dueFlag() {
    return "CASE WHEN deliver_after <= " + clock.statementNow() + " THEN 1 ELSE 0 END";
  }

  /**
   * The key-affine hand-over's claim: the {@code n} jobs of key runs ({@link #keyRunSql}) the
   * caller's transaction just read, those still ready and due, go to {@code W} under one token and
   * lease; unlike the claim it takes jobs that wait behind their key ({@code key_wait}), since the
   * run's head is claimed with them and the relay sends a run in order. Parameters: token, lease
   * millis, the n ids. Its lease counts from this statement ({@link SqlClock#statementNow()}), not
   * from the start of the completion transaction it runs in: on a loaded database that transaction
   * can take a good part of a lease, and its hand-over would otherwise pass on claims whose lease
   * had partly run out before they were made.
   */
  String claimKeyRunsSql(int n) {
    String at = clock.statementNow();
    return "UPDATE outbox_message SET state = 'W', claim_token = ?, lease_until = "
        + clock.statementNowPlusMillisParam()
        + ", claimed_at = "
        + at
        + " WHERE state = 'R' AND deliver_after <= "
        + at
        + " AND id IN "
        + placeholders(n);
  }

  /**
   * {@link #claimKeyRunsSql} returning the rows it claimed ({@link #CLAIM_COLUMNS}); null, the
   * default: the store reads them back ({@link #readClaimedSql}).
   */
  String claimKeyRunsReturningSql(int n) {
    return null;
  }

  /**
   * The rows of {@code n} ids claimed under a token. Parameters: token, the n ids. Columns: {@link
   * #CLAIM_COLUMNS}.
   */
  String readClaimedSql(int n) {
    return "SELECT "
        + CLAIM_COLUMNS
        + " FROM outbox_message WHERE claim_token = ? AND id IN "
        + placeholders(n)
        + " ORDER BY id";
  }
}
