package dev.outboxrelay.outbox.store.dialect;

import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * SQL Server 2017+ (and Azure SQL). The claim follows the lease-queue contract: READ COMMITTED,
 * auto-commit, one statement that picks candidates with {@code UPDLOCK, READPAST,
 * READCOMMITTEDLOCK} and moves them R → W with {@code OUTPUT ... INTO}. Times are UTC {@code
 * datetime2(3)} from {@code SYSUTCDATETIME()}; claim tokens are {@code uniqueidentifier}.
 *
 * <p>Why the hints belong to READ COMMITTED: {@code UPDLOCK} makes concurrent claimers queue on a
 * candidate instead of both reading it, {@code READPAST} lets them skip rows another claimer holds
 * instead of waiting, and {@code READCOMMITTEDLOCK} keeps that a locking read even where the
 * database has READ_COMMITTED_SNAPSHOT on (a row version would show a row as still {@code R} after
 * another claimer took it). Under SNAPSHOT isolation the candidate scan would read the
 * transaction's snapshot, not the latest committed rows, and updating a row another claimer changed
 * since the snapshot fails with an update conflict (3960) instead of skipping it; READPAST is not
 * even accepted there without further locking hints. So the claim refuses to run inside a
 * transaction (the caller's isolation would apply) and sets READ COMMITTED itself.
 *
 * <p>Deadlocks designed out: the claim scans ready rows in clustered-key (id) order through {@code
 * ix_outbox_message_head (state, key_wait, id)} and every token-checked update seeks one row by its
 * clustered key, so claims and completions lock rows in the same order. A deadlock victim (1205)
 * that still happens (e.g. page locks under memory pressure) is retried by the store. A retention
 * job on SQL Server must delete finished rows in small batches (picked by {@code SELECT TOP (n) ...
 * WITH (UPDLOCK, ROWLOCK, READPAST)}, deleted by id) from one relay at a time: one unbounded DELETE
 * escalates to a table lock past about 5,000 row locks and blocks or deadlocks every claim.
 */
public final class SqlServerDialect extends Dialect {

  // DATEADD takes no bigint (error 8116) and an int overflows past 24.8 days of milliseconds:
  // split the one bigint parameter into days and milliseconds inside a scalar sub-query.
  static final SqlClock CLOCK =
      new SqlClock(
          "SYSUTCDATETIME()",
          "SYSUTCDATETIME()",
          base ->
              "(SELECT DATEADD(MILLISECOND, CAST(p.ms % 86400000 AS INT),"
                  + " DATEADD(DAY, CAST(p.ms / 86400000 AS INT), "
                  + base
                  + "))"
                  + " FROM (SELECT CAST(? AS BIGINT) AS ms) p)",
          "DATETIME2(3)",
          "CAST(? AS DATETIME2(3))");

  /**
   * Unique constraint (2627) and unique index (2601) violations; deadlock victim (1205: SQL Server
   * rolled the victim's whole transaction back) and serialization failures; lock request timeout
   * (1222).
   */
  static final ErrorCodes ERRORS =
      new ErrorCodes(
          Set.of(), Set.of(2627, 2601), Set.of("40001"), Set.of(1205), Set.of(), Set.of(1222));

  public SqlServerDialect() {
    // Text converts implicitly to uniqueidentifier (the higher type), so index seeks still work.
    super("sqlserver", CLOCK, TypeBinding.utcText(Types.NVARCHAR), ERRORS);
  }

  @Override
  public boolean releasesSavepoints() {
    return false;
  }

  @Override
  String keyWaitFalse() {
    return "0";
  }

  @Override
  String limitParam() {
    // No LIMIT: OFFSET/FETCH after the ORDER BY (also valid in the bulk replay's IN sub-query).
    return " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY";
  }

  @Override
  String firstRows(String rows) {
    // No LIMIT: OFFSET/FETCH after the ORDER BY.
    return " OFFSET 0 ROWS FETCH NEXT " + rows + " ROWS ONLY";
  }

  @Override
  String insertIfAbsentSql() {
    // NOT EXISTS spares the usual re-enqueue an error (with XACT_ABORT ON an error dooms the
    // caller's transaction); a concurrent insert of the same ID still fails 2627, which the store
    // treats as "exists". No HOLDLOCK: its key-range lock would serialise every enqueue of a new
    // highest operation ID until the caller commits.
    return "INSERT INTO outbox_message (operation_id, destination, ordering_key, payload,"
        + " content_type, headers, deliver_after, payload_by_ref, key_wait) OUTPUT inserted.id"
        + " SELECT v.operation_id, v.destination, v.ordering_key, v.payload, v.content_type,"
        + " v.headers, v.deliver_after, v.payload_by_ref, v.key_wait FROM (SELECT ? AS operation_id,"
        + " ? AS destination, ? AS ordering_key, ? AS payload, ? AS content_type, ? AS headers, "
        + nowPlusMillisParam()
        + " AS deliver_after, ? AS payload_by_ref, ? AS key_wait) v"
        + " WHERE NOT EXISTS (SELECT 1 FROM outbox_message e WHERE e.operation_id = v.operation_id)";
  }

  /** No FOR SHARE: a shared lock held by a table hint. */
  @Override
  String lockUnfinishedSql() {
    // HOLDLOCK keeps the shared lock to the end of the caller's transaction, and makes it a
    // locking read even with READ_COMMITTED_SNAPSHOT on.
    return "SELECT id FROM outbox_message WITH (ROWLOCK, HOLDLOCK) WHERE id = ? AND state IN ('R', 'W')";
  }

  // ---- claim ---------------------------------------------------------------------------------

  /**
   * The claim batch. The guard refuses an open or implicit transaction ({@code @@OPTIONS & 2}:
   * IMPLICIT_TRANSACTIONS, which the driver uses when auto-commit is off). {@code OUTPUT ... INTO}
   * a table variable, then a SELECT of it: the client sees the claimed rows only after the UPDATE
   * completed (and, in auto-commit, committed), never a partial output of a failed statement.
   * Parameters: limit, token, lease millis.
   */
  @Override
  String claimSql() {
    return "SET NOCOUNT ON;"
        + " IF @@TRANCOUNT <> 0 OR (@@OPTIONS & 2) = 2"
        + " THROW 50000, 'outbox claim must run in auto-commit mode, outside any transaction', 1;"
        + " SET TRANSACTION ISOLATION LEVEL READ COMMITTED;"
        + " DECLARE @claimed TABLE (id BIGINT NOT NULL, operation_id NVARCHAR(200),"
        + " destination NVARCHAR(200), ordering_key NVARCHAR(200), payload NVARCHAR(MAX),"
        + " content_type NVARCHAR(100), headers NVARCHAR(MAX), attempts INT,"
        + " claim_token UNIQUEIDENTIFIER, created_at DATETIME2(3), lease_until DATETIME2(3),"
        + " payload_by_ref BIT);"
        + " WITH candidate AS (SELECT TOP (?) c.* FROM outbox_message c"
        + " WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK)"
        + " WHERE "
        + readyHeadCondition("c", keyWaitFalse())
        + " AND c.deliver_after <= "
        + now()
        + " ORDER BY c.id)"
        + " UPDATE candidate SET state = 'W', claim_token = ?,"
        + " lease_until = "
        + nowPlusMillisParam()
        + ", claimed_at = "
        + now()
        + " OUTPUT inserted.id, inserted.operation_id, inserted.destination, inserted.ordering_key,"
        + " inserted.payload, inserted.content_type, inserted.headers, inserted.attempts,"
        + " inserted.claim_token, inserted.created_at, inserted.lease_until,"
        + " inserted.payload_by_ref INTO @claimed;"
        + " SELECT "
        + CLAIM_COLUMNS
        + " FROM @claimed ORDER BY id;";
  }

  /** TOP comes first in the batch. */
  @Override
  List<Object> claimParams(UUID token, long leaseMillis, int limit) {
    return List.of(limit, token, leaseMillis);
  }

  // ---- token-checked transitions -------------------------------------------------------------

  @Override
  String insertAttemptSql() {
    // One SYSUTCDATETIME() for started_at and finished_at: two calls in one statement may differ.
    // An int of milliseconds: one attempt's elapsed time stays far below 24.8 days.
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, finished_at,"
        + " outcome, error_class, error_message, response_summary, relay_instance)"
        + " SELECT ?, ?, ?, COALESCE("
        + CLOCK.timestampParam()
        + ", DATEADD(MILLISECOND, CAST(? AS INT), n.t)),"
        + " n.t, ?, ?, ?, ?, ?"
        + " FROM (SELECT "
        + now()
        + " AS t) n";
  }

  @Override
  boolean likeSpecial(char ch) {
    // T-SQL's LIKE also reads [...] as a character class.
    return ch == '[' || super.likeSpecial(ch);
  }

  /**
   * The pairs join in as a table value constructor; OUTPUT returns the ids changed (the statement
   * runs in the store's transaction, so a failure leaves no partial output behind). Every row is
   * sought by its clustered key, in the order of the other token-checked updates. Parameters: each
   * id and token, two per pair under the limit of 2,100 per statement ({@link
   * #maxCompletionPairs()}).
   */
  @Override
  BoundSql markDeliveredAll(List<Long> ids, List<UUID> tokens) {
    return new BoundSql(
        "UPDATE m "
            + deliveredAssignments()
            + " OUTPUT inserted.id FROM outbox_message m"
            + pairsJoin(ids.size()),
        pairs(List.of(), ids, tokens));
  }

  /** Renewed rows come back through OUTPUT, sought by their clustered key as the completion is. */
  @Override
  BoundSql renewLeases(List<Long> ids, List<UUID> tokens, long leaseMillis) {
    return new BoundSql(
        "UPDATE m SET lease_until = "
            + nowPlusMillisParam()
            + " OUTPUT inserted.id FROM outbox_message m"
            + pairsJoin(ids.size()),
        pairs(List.of(leaseMillis), ids, tokens));
  }

  private static String pairsJoin(int pairs) {
    return " JOIN (VALUES "
        + String.join(", ", Collections.nCopies(pairs, "(CAST(? AS BIGINT), ?)"))
        + ") AS d (id, claim_token) ON m.id = d.id AND m.claim_token = d.claim_token WHERE m.state = 'W'";
  }

  /** {@code first}, then each id and token. */
  private static List<Object> pairs(List<Object> first, List<Long> ids, List<UUID> tokens) {
    List<Object> params = new ArrayList<>(first);
    for (int i = 0; i < ids.size(); i++) {
      params.add(ids.get(i));
      params.add(tokens.get(i));
    }
    return params;
  }

  // ---- reaper --------------------------------------------------------------------------------

  @Override
  String lockExpiredLeasesSql() {
    // No LIMIT / FOR UPDATE SKIP LOCKED: TOP and the same skip-locked hints as the claim; the U
    // locks hold until the reaper's transaction commits.
    return "SELECT TOP (?) id, claim_token, attempts, claimed_at, ordering_key FROM outbox_message"
        + " WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK, ROWLOCK)"
        + " WHERE state = 'W' AND lease_until < "
        + now()
        + " ORDER BY lease_until";
  }

  // ---- inspection ----------------------------------------------------------------------------

  @Override
  String oldestReadySql() {
    // No sub-query inside an aggregate (error 130): the first attempt comes through OUTER APPLY.
    return "SELECT MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "f.first_started, m.deliver_after) END), "
        + now()
        + " FROM outbox_message m"
        + FIRST_ATTEMPT_APPLY
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= "
        + now()
        + "))";
  }

  @Override
  String backlogByDestinationSql() {
    // The same contract as the base statement; the first attempt through OUTER APPLY (error 130).
    return "SELECT m.destination,"
        + " SUM(CASE WHEN m.state = 'R' AND m.deliver_after <= "
        + now()
        + " THEN 1 ELSE 0 END),"
        + " MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "f.first_started, m.deliver_after) END), "
        + now()
        + " FROM outbox_message m"
        + FIRST_ATTEMPT_APPLY
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= "
        + now()
        + "))"
        + " GROUP BY m.destination ORDER BY m.destination";
  }

  private static final String FIRST_ATTEMPT_APPLY =
      " OUTER APPLY (SELECT MIN(a.started_at) AS first_started FROM outbox_attempt a"
          + " WHERE a.message_id = m.id) f";

  // ---- retention -----------------------------------------------------------------------------

  @Override
  BoundSql pickFinished(long keepMillis, int limit) {
    // Small batches under row locks, skipping locked rows: an unbounded DELETE escalates to a table
    // lock past about 5,000 row locks and blocks every claim (see the class comment). UPDLOCK holds
    // the picked rows for the delete by id in the same transaction.
    return new BoundSql(
        "SELECT TOP (?) f.id FROM outbox_message f WITH (UPDLOCK, ROWLOCK, READPAST) WHERE "
            + finishedBeforeCondition("f")
            + " ORDER BY f.id",
        List.of(limit, -keepMillis));
  }

  // ---- reconciliation ------------------------------------------------------------------------

  @Override
  String upsertConfirmationSql() {
    // MERGE alone is not atomic against a concurrent insert of the same key: HOLDLOCK keeps the
    // key range locked from the match to the insert. A MERGE must end with a semicolon.
    return "MERGE INTO outbox_confirmation WITH (HOLDLOCK) AS c"
        + " USING (SELECT ? AS operation_id, ? AS destination, ? AS confirmed_at, ? AS applied_count,"
        + " ? AS source) v ON c.operation_id = v.operation_id AND c.destination = v.destination"
        + " WHEN MATCHED THEN UPDATE SET confirmed_at = v.confirmed_at,"
        + " applied_count = v.applied_count, source = v.source, recorded_at = "
        + now()
        + " WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)"
        + " VALUES (v.operation_id, v.destination, v.confirmed_at, v.applied_count, v.source);";
  }

  @Override
  String releaseLockSql() {
    // datetime2(3) rounds SYSUTCDATETIME() to the millisecond, possibly up: a lease ending "now"
    // could still be live a moment later (taking needs lease_until < now), so end it 1 ms ago.
    return "UPDATE outbox_lock SET lease_until = DATEADD(MILLISECOND, -1, "
        + now()
        + ")"
        + " WHERE name = ? AND owner = ?";
  }

  // ---- inbox ---------------------------------------------------------------------------------

  @Override
  String inboxLockRowSql() {
    return "SELECT "
        + INBOX_COLUMNS
        + " FROM outbox_inbox WITH (UPDLOCK, ROWLOCK)"
        + " WHERE destination = ? AND operation_id = ?";
  }

  @Override
  String inboxConfirmSql() {
    return "MERGE INTO outbox_confirmation WITH (HOLDLOCK) AS c USING (SELECT ? AS op, ? AS dest,"
        + " ? AS src) v ON c.operation_id = v.op AND c.destination = v.dest"
        + " WHEN MATCHED THEN UPDATE SET applied_count = c.applied_count + 1"
        + " WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)"
        + " VALUES (v.op, v.dest, "
        + now()
        + ", 1, v.src);";
  }

  @Override
  String inboxDeleteBatchSql() {
    // TOP needs its parameter first.
    return "DELETE FROM outbox_inbox WHERE id IN (SELECT TOP (?) id FROM outbox_inbox"
        + " WHERE applied_at < ? ORDER BY applied_at)";
  }

  @Override
  List<Object> inboxDeleteBatchParams(Instant before, int n) {
    return List.of(n, before);
  }
}
