package dev.outboxrelay.outbox.store.dialect;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;

/**
 * One database: its clock ({@link SqlClock}), how its driver binds tokens and times ({@link
 * TypeBinding}), what its errors mean ({@link ErrorCodes}) and the statements every store sends to
 * it, as statement sets rendered once for an outbox's table names ({@link #jobs}, {@link #admin},
 * {@link #reconciliation}, {@link #inbox}). This class builds the statements every database shares
 * from those parts; the class of each database ({@link PostgresDialect}, {@link MariaDbDialect},
 * {@link H2Dialect}, {@link SqlServerDialect}) overrides only what differs, each quirk with a
 * one-line comment. The builders are package-private: a store reads statements only through the
 * statement sets, written with the default names and rendered for the configured ones when the set
 * is made. Parameters are documented on each builder in order.
 */
public abstract class Dialect {

  /**
   * Columns returned by a claim, in this order. Only outbox_message: a by-reference job's body
   * stays in outbox_payload until its sender loads it ({@link JobStatements#findPayloadSql}).
   */
  public static final String CLAIM_COLUMNS =
      "id, operation_id, destination, ordering_key, payload, content_type, headers, attempts,"
          + " claim_token, created_at, lease_until, payload_by_ref";

  /** Every column of outbox_message, in this order. */
  public static final String MESSAGE_COLUMNS =
      "id, operation_id, destination, ordering_key, payload, content_type, headers, state,"
          + " claim_token, lease_until, deliver_after, attempts, last_error, created_at, claimed_at,"
          + " sent_at, confirmed_at, payload_by_ref, key_wait";

  /** Columns of {@link AdminStatements#listMessages}, in this order. */
  public static final String SUMMARY_COLUMNS =
      "m.id, m.operation_id, m.destination, m.ordering_key, m.content_type, m.state, m.attempts,"
          + " m.last_error, f.error_class, f.finished_at, m.deliver_after, m.created_at, m.claimed_at,"
          + " m.lease_until, m.sent_at, m.confirmed_at";

  /** Columns of {@link ReconciliationStatements#classifyWindowSql()}, in this order. */
  public static final String WINDOW_COLUMNS =
      "message_id, operation_id, destination, state, sent_at,"
          + " last_error, attempts, confirmed_count, confirmed_at, category";

  /** Columns of a reconciliation run row, in this order. */
  public static final String RUN_COLUMNS =
      "id, window_start, window_end, started_at, finished_at,"
          + " triggered_by, owner, schedule_slot, matched, sent_unconfirmed, confirmed_not_sent,"
          + " duplicate_effects, dead, pending, error";

  /** Columns of an inbox row as a delivery reads it. */
  static final String INBOX_COLUMNS = "payload_sha256, outcome, deliveries, applied_at";

  /** Columns of an inbox ledger entry. */
  static final String LEDGER_COLUMNS =
      "operation_id, destination, message_id, applied_at, deliveries";

  /**
   * The latest failed attempt of the job aliased {@code m}, joined as {@code f} (null columns when
   * it never failed). Outcomes that changed the job's state by failing; a {@code STALE} attempt (a
   * late result of a lost claim) changed nothing and is not the job's diagnosis.
   */
  static final String LATEST_FAILURE_JOIN =
      " LEFT JOIN outbox_attempt f ON f.id = (SELECT MAX(a.id) FROM outbox_attempt a"
          + " WHERE a.message_id = m.id AND a.outcome IN ('RETRY', 'DEAD', 'LEASE_EXPIRED', 'CANCELLED'))";

  /** When a dead job died: its latest failure, else (set dead by hand) its creation. */
  static final String DIED_AT = "COALESCE(f.finished_at, m.created_at)";

  /**
   * The character that makes the next one literal in a {@code LIKE} pattern ({@link
   * #containsPattern}).
   */
  static final char LIKE_ESCAPE = '!';

  /** A job's time for the listing's range: its creation, or for a dead job the time it died. */
  static final String LISTED_AT =
      "CASE WHEN m.state = 'D' THEN " + DIED_AT + " ELSE m.created_at END";

  private final String name;
  private final SqlClock clock;
  private final TypeBinding binding;
  private final ErrorCodes errors;

  Dialect(String name, SqlClock clock, TypeBinding binding, ErrorCodes errors) {
    this.name = Objects.requireNonNull(name, "name");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.binding = Objects.requireNonNull(binding, "binding");
    this.errors = Objects.requireNonNull(errors, "errors");
  }

  /**
   * Short name ({@link DialectDetector#names()}); also the migration folders {@code
   * db/outbox/<name>} and {@code db/inbox/<name>}.
   */
  public final String name() {
    return name;
  }

  public final SqlClock clock() {
    return clock;
  }

  public final TypeBinding binding() {
    return binding;
  }

  public final ErrorCodes errors() {
    return errors;
  }

  /** Flyway location of this database's outbox migrations. */
  public final String migrationLocation() {
    return "classpath:db/outbox/" + name;
  }

  /** Flyway location of this database's inbox migrations. */
  public final String inboxMigrationLocation() {
    return "classpath:db/inbox/" + name;
  }

  /**
   * The notification this database sends when jobs are committed, for relays to wake up on; empty
   * when it has none (relays poll only).
   */
  public Optional<ReadyNotifications> readyNotifications() {
    return Optional.empty();
  }

  /**
   * The isolation level the claim's and retention's locking reads run at, when the connection's own
   * is not right for them; empty: as the connection comes.
   */
  public OptionalInt lockingReadIsolation() {
    return OptionalInt.empty();
  }

  /** Most (id, token) pairs one batched statement takes; the store splits larger batches. */
  public int maxCompletionPairs() {
    return 1000;
  }

  /** Whether the driver releases savepoints (SQL Server's keeps them to the transaction's end). */
  public boolean releasesSavepoints() {
    return true;
  }

  /** The relay's and the enqueue's statements for the outbox named by {@code tables}. */
  public final JobStatements jobs(OutboxTables tables) {
    return new JobStatements(this, tables);
  }

  /** The operator's statements for the outbox named by {@code tables}. */
  public final AdminStatements admin(OutboxTables tables) {
    return new AdminStatements(this, tables);
  }

  /**
   * The reconciliation's and the fleet lock's statements for the outbox named by {@code tables}.
   */
  public final ReconciliationStatements reconciliation(OutboxTables tables) {
    return new ReconciliationStatements(this, tables);
  }

  /** The inbox's statements ({@code outbox_inbox}, and the confirmations it counts). */
  public final InboxStatements inbox() {
    return new InboxStatements(this);
  }

  @Override
  public String toString() {
    return getClass().getSimpleName();
  }

  // ---- fragments -----------------------------------------------------------------------------

  final String now() {
    return clock.now();
  }

  final String nowPlusMillisParam() {
    return clock.nowPlusMillisParam();
  }

  /** SQL literal of a false {@code key_wait}. */
  String keyWaitFalse() {
    return "FALSE";
  }

  /** {@code (?, ?, ...)} with {@code n} placeholders. */
  static String placeholders(int n) {
    return "(" + String.join(", ", Collections.nCopies(n, "?")) + ")";
  }

  /** A row limit taking one parameter, after ORDER BY. */
  String limitParam() {
    return " LIMIT ?";
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
   * The key-affine hand-over: claims {@code n} heads the caller's transaction has just promoted
   * (and so holds), those still ready and due, as the claim does. Parameters: token, lease millis,
   * the n ids. Its lease counts from this statement ({@link SqlClock#statementNow()}), not from the
   * start of the completion transaction it runs in: on a loaded database that transaction can take
   * a good part of a lease, and its hand-over would otherwise pass on claims whose lease had partly
   * run out before they were made.
   */
  String claimHeldHeadsSql(int n) {
    String at = clock.statementNow();
    return "UPDATE outbox_message SET state = 'W', claim_token = ?, lease_until = "
        + clock.statementNowPlusMillisParam()
        + ", claimed_at = "
        + at
        + " WHERE state = 'R' AND key_wait = "
        + keyWaitFalse()
        + " AND deliver_after <= "
        + at
        + " AND id IN "
        + placeholders(n);
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

  // ---- token-checked transitions (parameters end with id, claim_token) -----------------------

  /** Extends the lease. Parameters: lease millis, id, token. */
  String renewLeaseSql() {
    return "UPDATE outbox_message SET lease_until = "
        + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /**
   * The batched heartbeat where {@link #updateReturnsRows()}: extends to database now + {@code
   * leaseMillis} the lease of every (id, token) pair whose row is still {@code W} with that token,
   * and returns the ids it extended. Default: the pairs as {@link #tokenPairsCondition}.
   */
  BoundSql renewLeases(List<Long> ids, List<UUID> tokens, long leaseMillis) {
    throw new UnsupportedOperationException(name + " renews locked leases");
  }

  /**
   * Extends the leases of {@code n} rows locked by {@link #lockTokensHeldSql}. Parameters: lease
   * millis, the n ids.
   */
  String renewLockedSql(int n) {
    return "UPDATE outbox_message SET lease_until = "
        + nowPlusMillisParam()
        + " WHERE state = 'W' AND id IN "
        + placeholders(n);
  }

  /**
   * The attempts already recorded with one outcome for {@code n} jobs: a transition retried after
   * an answer that never came (the connection broke at commit, the process froze) reads back
   * whether its first try committed, instead of calling its own committed outcome stale.
   * Parameters: outcome, then the n message ids. Columns: message_id, claim_token.
   */
  String recordedAttemptsSql(int n) {
    return "SELECT message_id, claim_token FROM outbox_attempt WHERE outcome = ? AND message_id IN "
        + placeholders(n);
  }

  /** W → S. Parameters: id, token. */
  String markDeliveredSql() {
    return "UPDATE outbox_message "
        + deliveredAssignments()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /**
   * The assignments of W → S ({@code SET ...}), shared by the single and the batched completion.
   */
  String deliveredAssignments() {
    return "SET state = 'S', sent_at = "
        + now()
        + ", claim_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = NULL";
  }

  /**
   * W → S for many jobs in one statement where {@link #updateReturnsRows()}: each pair's row is
   * completed only while it is {@code W} with that token; the others (ownership lost) change
   * nothing. Columns: id of each row completed.
   */
  BoundSql markDeliveredAll(List<Long> ids, List<UUID> tokens) {
    throw new UnsupportedOperationException(name + " completes locked rows");
  }

  /**
   * Locks the rows of {@code pairs} (id, token) pairs that are still {@code W} with their token.
   * Parameters: as {@link #tokenPairsCondition}. Columns: id.
   */
  String lockTokensHeldSql(int pairs) {
    return "SELECT m.id FROM outbox_message m WHERE m.state = 'W' AND "
        + tokenPairsCondition("m", pairs)
        + " FOR UPDATE";
  }

  /** W → S of {@code n} rows locked by {@link #lockTokensHeldSql}. Parameters: the n ids. */
  String markLockedDeliveredSql(int n) {
    return "UPDATE outbox_message "
        + deliveredAssignments()
        + " WHERE state = 'W' AND id IN "
        + placeholders(n);
  }

  /**
   * The row aliased {@code row} is one of {@code pairs} (id, token) pairs: an id list the primary
   * key index serves, then the pairs themselves. Parameters ({@link #tokenPairs}): the ids, then
   * each id and token.
   */
  static String tokenPairsCondition(String row, int pairs) {
    return row
        + ".id IN "
        + placeholders(pairs)
        + " AND ("
        + row
        + ".id, "
        + row
        + ".claim_token) IN ("
        + String.join(", ", Collections.nCopies(pairs, "(?, ?)"))
        + ")";
  }

  /** The parameters of {@link #tokenPairsCondition}: the ids, then each id and token. */
  static List<Object> tokenPairs(List<Long> ids, List<UUID> tokens) {
    List<Object> params = new ArrayList<>(ids);
    for (int i = 0; i < ids.size(); i++) {
      params.add(ids.get(i));
      params.add(tokens.get(i));
    }
    return params;
  }

  /** W → R after a backoff. Parameters: last_error, delay millis, id, token. */
  String markForRetrySql() {
    return "UPDATE outbox_message SET state = 'R', claim_token = NULL, lease_until = NULL,"
        + " attempts = attempts + 1, last_error = ?, deliver_after = "
        + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /** W → D. Parameters: last_error, id, token. */
  String markDeadSql() {
    return "UPDATE outbox_message SET state = 'D', claim_token = NULL, lease_until = NULL,"
        + " attempts = attempts + 1, last_error = ? WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /** W → R without counting an attempt. Parameters: id, token. */
  String releaseSql() {
    return "UPDATE outbox_message SET state = 'R', claim_token = NULL, lease_until = NULL"
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /**
   * Records an attempt that just finished. Parameters: message_id, attempt_no, claim_token,
   * started_at (when the send started, on the database clock; null when unknown), minus elapsed
   * millis (started_at = now - elapsed when unknown), outcome, error_class, error_message,
   * response_summary, relay_instance.
   */
  String insertAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, outcome,"
        + " error_class, error_message, response_summary, relay_instance) VALUES (?, ?, ?, COALESCE("
        + clock.timestampParam()
        + ", "
        + nowPlusMillisParam()
        + "), ?, ?, ?, ?, ?)";
  }

  // ---- reaper --------------------------------------------------------------------------------

  /**
   * Locks expired leases for the reaper, skipping rows other reapers hold. Runs inside a
   * transaction. Parameters: limit. Columns: id, claim_token, attempts, claimed_at, ordering_key.
   */
  String lockExpiredLeasesSql() {
    return "SELECT id, claim_token, attempts, claimed_at, ordering_key FROM outbox_message"
        + " WHERE state = 'W' AND lease_until < "
        + now()
        + " ORDER BY lease_until LIMIT ? FOR UPDATE SKIP LOCKED";
  }

  /**
   * Returns one locked, expired lease to R (or D when attempts reach the maximum), invalidating its
   * token, due again after a retry delay (as after a failure). Parameters: max attempts,
   * last_error, retry delay millis, id, token.
   */
  String expireLeaseSql() {
    return "UPDATE outbox_message SET state = CASE WHEN attempts + 1 >= ? THEN 'D' ELSE 'R' END,"
        + " claim_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = ?,"
        + " deliver_after = "
        + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W' AND lease_until < "
        + now();
  }

  /**
   * Records the attempt an expired lease stands for. Parameters: message_id, attempt_no,
   * claim_token, started_at (the claim time), error_message.
   */
  String insertExpiredAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, outcome,"
        + " error_class, error_message) VALUES (?, ?, ?, ?, 'LEASE_EXPIRED', 'LeaseExpired', ?)";
  }

  // ---- retention -----------------------------------------------------------------------------

  /**
   * The rows retention may delete, on the row aliased {@code row}: sent ({@code S}) longer than the
   * keep age ago, or confirmed ({@code C}) longer ago (by {@code confirmed_at}; {@code sent_at} for
   * a row confirmed without one). Never {@code R}, {@code W} or {@code D}; a row whose time is null
   * is never deleted. One parameter: minus the keep age in millis (cutoff = database now + it).
   */
  String finishedBeforeCondition(String row) {
    return row
        + ".state IN ('S', 'C') AND CASE WHEN "
        + row
        + ".state = 'C' THEN COALESCE("
        + row
        + ".confirmed_at, "
        + row
        + ".sent_at) ELSE "
        + row
        + ".sent_at END < "
        + nowPlusMillisParam();
  }

  /**
   * Deletes up to {@code limit} finished jobs ({@link #finishedBeforeCondition}) older than {@code
   * keepMillis} by the database clock, in one statement that holds its row locks only for itself
   * (auto-commit) and skips rows another transaction holds where the database can. Their attempts
   * and out-of-band bodies go with them ({@code ON DELETE CASCADE}). Returns the update count: jobs
   * deleted.
   */
  abstract BoundSql deleteFinished(long keepMillis, int limit);

  // ---- inspection ----------------------------------------------------------------------------

  String countByStateSql() {
    return "SELECT state, COUNT(*) FROM outbox_message GROUP BY state";
  }

  /**
   * Columns: since when the longest-waiting job has been waiting (null if none), database now. A
   * job never tried waits since its {@code deliver_after} once that is due; a job being retried
   * (attempts > 0, ready in backoff or in flight) waits since its first attempt started, so a
   * backlog that a failing sink keeps bouncing back into backoff still ages.
   */
  String oldestReadySql() {
    return "SELECT MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "(SELECT MIN(a.started_at) FROM outbox_attempt a WHERE a.message_id = m.id),"
        + " m.deliver_after) END), "
        + now()
        + " FROM outbox_message m"
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= "
        + now()
        + "))";
  }

  /**
   * {@link #oldestReadySql()} grouped by destination, with the count of ready jobs due now.
   * Columns: destination, ready due jobs, since when the destination's longest-waiting job has been
   * waiting, database now. Same WHERE as {@link #oldestReadySql()}, so the scan starts from {@code
   * ix_outbox_message_due (state, deliver_after, id)} like it does.
   */
  String backlogByDestinationSql() {
    return "SELECT m.destination,"
        + " SUM(CASE WHEN m.state = 'R' AND m.deliver_after <= "
        + now()
        + " THEN 1 ELSE 0 END),"
        + " MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "(SELECT MIN(a.started_at) FROM outbox_attempt a WHERE a.message_id = m.id),"
        + " m.deliver_after) END), "
        + now()
        + " FROM outbox_message m"
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= "
        + now()
        + "))"
        + " GROUP BY m.destination ORDER BY m.destination";
  }

  /** Parameters: id. Columns: {@link #MESSAGE_COLUMNS}. */
  String findMessageSql() {
    return "SELECT " + MESSAGE_COLUMNS + " FROM outbox_message WHERE id = ?";
  }

  /**
   * The out-of-band body of one job, by its primary key. Parameters: message_id. Columns:
   * message_id, body, size_bytes, sha256.
   */
  String findPayloadSql() {
    return "SELECT message_id, body, size_bytes, sha256 FROM outbox_payload WHERE message_id = ?";
  }

  /** Parameters: operation_id. Columns: {@link #MESSAGE_COLUMNS}. */
  String findByOperationIdSql() {
    return "SELECT " + MESSAGE_COLUMNS + " FROM outbox_message WHERE operation_id = ?";
  }

  /** Parameters: message_id. */
  String attemptsSql() {
    return "SELECT message_id, attempt_no, claim_token, started_at, finished_at, outcome,"
        + " error_class, error_message, response_summary, relay_instance FROM outbox_attempt"
        + " WHERE message_id = ? ORDER BY id";
  }

  // ---- admin: inspection and operator actions ------------------------------------------------

  /**
   * One page of the listing, in id order; {@code q.limit()} rows at most. Columns: {@link
   * #SUMMARY_COLUMNS}. Keyset paging on the primary key, so a page costs its size, not its offset;
   * every condition of {@code q} is a bound parameter.
   */
  BoundSql listMessages(Listing q) {
    StringBuilder sql =
        new StringBuilder(
            "SELECT "
                + SUMMARY_COLUMNS
                + " FROM outbox_message m"
                + LATEST_FAILURE_JOIN
                + " WHERE m.id > ?");
    List<Object> params = new ArrayList<>(List.of(q.afterId()));
    and(sql, params, "m.state = ?", q.state() == null ? null : String.valueOf(q.state()));
    and(sql, params, "m.destination = ?", q.destination());
    and(sql, params, "m.ordering_key = ?", q.orderingKey());
    and(sql, params, "f.error_class = ?", q.errorClass());
    and(
        sql,
        params,
        "m.operation_id LIKE ? ESCAPE '" + LIKE_ESCAPE + "'",
        q.operationIdContains() == null ? null : containsPattern(q.operationIdContains()));
    and(sql, params, LISTED_AT + " >= ?", q.from());
    and(sql, params, LISTED_AT + " < ?", q.to());
    params.add(q.limit());
    return new BoundSql(sql.append(" ORDER BY m.id").append(limitParam()).toString(), params);
  }

  /**
   * A {@code LIKE} pattern matching text that contains {@code text} literally: its wildcards (and
   * the escape character) escaped with {@link #LIKE_ESCAPE}.
   */
  String containsPattern(String text) {
    StringBuilder p = new StringBuilder("%");
    for (char ch : text.toCharArray()) {
      if (likeSpecial(ch)) {
        p.append(LIKE_ESCAPE);
      }
      p.append(ch);
    }
    return p.append('%').toString();
  }

  /** Whether {@code ch} means something in a {@code LIKE} pattern. */
  boolean likeSpecial(char ch) {
    return ch == '%' || ch == '_' || ch == LIKE_ESCAPE;
  }

  /** Counts the dead jobs a filter matches. Columns: the count. */
  BoundSql countDead(
      String destination, String errorClass, Instant diedFrom, Instant diedTo, String orderingKey) {
    StringBuilder sql =
        new StringBuilder(
            "SELECT COUNT(*) FROM outbox_message m" + LATEST_FAILURE_JOIN + " WHERE m.state = 'D'");
    List<Object> params = new ArrayList<>();
    deadConditions(sql, params, destination, errorClass, diedFrom, diedTo, orderingKey);
    return new BoundSql(sql.toString(), params);
  }

  /**
   * Replays up to {@code limit} of the dead jobs a filter matches, lowest ids first: each {@code D
   * → R} as by {@link #replayDeadSql()}, conditional on still being {@code D}. Returns the update
   * count.
   */
  BoundSql replayDead(
      String destination,
      String errorClass,
      Instant diedFrom,
      Instant diedTo,
      String orderingKey,
      int limit) {
    StringBuilder select =
        new StringBuilder(
            "SELECT m.id FROM outbox_message m" + LATEST_FAILURE_JOIN + " WHERE m.state = 'D'");
    List<Object> params = new ArrayList<>();
    deadConditions(select, params, destination, errorClass, diedFrom, diedTo, orderingKey);
    params.add(limit);
    select.append(" ORDER BY m.id").append(limitParam());
    return new BoundSql(updatePickedDead(replayAssignments(), select.toString()), params);
  }

  /**
   * The bulk replay's UPDATE: applies {@code assignments} ({@code SET ...}) to the rows whose ids
   * {@code pickIds} selects (a limited, ordered {@code SELECT m.id FROM outbox_message m ...}),
   * only while they are still {@code D}.
   */
  String updatePickedDead(String assignments, String pickIds) {
    return "UPDATE outbox_message "
        + assignments
        + " WHERE state = 'D' AND id IN ("
        + pickIds
        + ")";
  }

  private static void deadConditions(
      StringBuilder sql,
      List<Object> params,
      String destination,
      String errorClass,
      Instant diedFrom,
      Instant diedTo,
      String orderingKey) {
    and(sql, params, "m.destination = ?", destination);
    and(sql, params, "f.error_class = ?", errorClass);
    and(sql, params, DIED_AT + " >= ?", diedFrom);
    and(sql, params, DIED_AT + " < ?", diedTo);
    and(sql, params, "m.ordering_key = ?", orderingKey);
  }

  /** Appends {@code AND condition} with its one parameter when the value is set. */
  private static void and(StringBuilder sql, List<Object> params, String condition, Object value) {
    if (value != null) {
      sql.append(" AND ").append(condition);
      params.add(value);
    }
  }

  /** The replay's assignments: a full attempt budget, due now, no claim. */
  private String replayAssignments() {
    // Not waiting: the claim's head check holds it back while an earlier job of its key is
    // unfinished, and no final transition of an earlier job may come to clear a wait.
    return "SET state = 'R', attempts = 0, deliver_after = "
        + now()
        + ", claim_token = NULL, lease_until = NULL, key_wait = "
        + keyWaitFalse();
  }

  /**
   * D → R for another full attempt budget, due now; the last error stays until the next attempt
   * replaces it. Conditional on {@code D}: 0 rows means unknown or not dead. Parameters: id.
   */
  String replayDeadSql() {
    return "UPDATE outbox_message " + replayAssignments() + " WHERE id = ? AND state = 'D'";
  }

  /**
   * R → D by an operator. Conditional on {@code R}: a {@code W} job is in flight and cannot be
   * stopped mid-send. Parameters: last_error, id.
   */
  String cancelReadySql() {
    return "UPDATE outbox_message SET state = 'D', last_error = ? WHERE id = ? AND state = 'R'";
  }

  /**
   * Records a cancel as the job's latest failure (so it has an error class and a time of death),
   * numbered as the attempt that will now not happen. Parameters: error_message, message_id.
   */
  String insertCancelAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, started_at, outcome, error_class,"
        + " error_message) SELECT id, attempts + 1, "
        + now()
        + ", 'CANCELLED', 'Cancelled', ?"
        + " FROM outbox_message WHERE id = ?";
  }

  /** Columns: destination, state, count. */
  String countByDestinationAndStateSql() {
    return "SELECT destination, state, COUNT(*) FROM outbox_message GROUP BY destination, state"
        + " ORDER BY destination, state";
  }

  /** Columns: error class (null when none), count; largest first. */
  String countDeadByErrorClassSql() {
    return "SELECT f.error_class, COUNT(*) FROM outbox_message m"
        + LATEST_FAILURE_JOIN
        + " WHERE m.state = 'D' GROUP BY f.error_class ORDER BY 2 DESC, 1";
  }

  /**
   * Ordering keys with dead jobs, the oldest dead job first. Parameters: limit. Columns:
   * ordering_key, dead count, lowest dead id.
   */
  String deadOrderingKeysSql() {
    return "SELECT ordering_key, COUNT(*), MIN(id) FROM outbox_message"
        + " WHERE state = 'D' AND ordering_key IS NOT NULL GROUP BY ordering_key ORDER BY 3"
        + limitParam();
  }

  // ---- reconciliation: confirmations ---------------------------------------------------------

  /**
   * Inserts a confirmation or replaces the existing one of the same operation ID and destination
   * (the source's current view wins). Parameters: operation_id, destination, confirmed_at,
   * applied_count, source.
   */
  abstract String upsertConfirmationSql();

  // ---- reconciliation: classification --------------------------------------------------------

  /**
   * Every job of one destination created in the window, with its confirmation, plus every
   * confirmation of that destination in the window (by confirmed_at) that names no job; each with
   * its category (docs/design.md "Reconciliation"), decided in this order:
   *
   * <ol>
   *   <li>{@code duplicate_effects}: applied more than once, whatever the job's state;
   *   <li>{@code matched}: {@code C}, or {@code S} applied exactly once;
   *   <li>{@code sent_unconfirmed}: {@code S}, sent before now - grace, not applied;
   *   <li>{@code confirmed_not_sent}: applied once but {@code R}, {@code W}, {@code D} or no job;
   *   <li>{@code dead}: {@code D}, not applied;
   *   <li>{@code pending}: not judged yet ({@code R}/{@code W}, or {@code S} inside the grace).
   * </ol>
   *
   * Parameters: grace millis (negated), destination, window start, window end, destination, window
   * start, window end. Columns: {@link #WINDOW_COLUMNS}; ordered by operation_id.
   */
  String classifyWindowSql() {
    String applied = "COALESCE(c.applied_count, 0)";
    return "SELECT m.id, m.operation_id, m.destination, m.state, m.sent_at, m.last_error, m.attempts, "
        + applied
        + ", c.confirmed_at, CASE"
        + " WHEN "
        + applied
        + " > 1 THEN 'duplicate_effects'"
        + " WHEN m.state = 'C' THEN 'matched'"
        + " WHEN m.state = 'S' AND "
        + applied
        + " = 1 THEN 'matched'"
        + " WHEN m.state = 'S' AND m.sent_at < "
        + nowPlusMillisParam()
        + " THEN 'sent_unconfirmed'"
        + " WHEN m.state = 'S' THEN 'pending'"
        + " WHEN "
        + applied
        + " = 1 THEN 'confirmed_not_sent'"
        + " WHEN m.state = 'D' THEN 'dead'"
        + " ELSE 'pending' END"
        + " FROM outbox_message m LEFT JOIN outbox_confirmation c"
        + " ON c.operation_id = m.operation_id AND c.destination = m.destination"
        + " WHERE m.destination = ? AND m.created_at >= ? AND m.created_at < ?"
        + " UNION ALL"
        // Explicit casts: the NULL columns of the second branch must carry the first one's types.
        + " SELECT "
        + nullOf("BIGINT")
        + ", c.operation_id, c.destination, "
        + nullOf("CHAR(1)")
        + ","
        + " "
        + nullOf(clock.timestampType())
        + ", "
        + nullOf("VARCHAR(2000)")
        + ", "
        + nullOf("INTEGER")
        + ","
        + " c.applied_count, c.confirmed_at,"
        + " CASE WHEN c.applied_count > 1 THEN 'duplicate_effects' ELSE 'confirmed_not_sent' END"
        + " FROM outbox_confirmation c"
        + " WHERE c.destination = ? AND c.confirmed_at >= ? AND c.confirmed_at < ?"
        + " AND NOT EXISTS (SELECT 1 FROM outbox_message m"
        + " WHERE m.operation_id = c.operation_id AND m.destination = c.destination)"
        + " ORDER BY 2";
  }

  /** A NULL of an SQL type, e.g. {@code CAST(NULL AS BIGINT)}. */
  String nullOf(String type) {
    return "CAST(NULL AS " + type + ")";
  }

  /** Keeps the first {@code rows} rows (a number or {@code ?}); follows the ORDER BY. */
  String firstRows(String rows) {
    return " LIMIT " + rows;
  }

  // ---- reconciliation: conditional state moves, each re-checks what the classification saw --

  /**
   * {@code S → C} for a matched job, only while it is still {@code S} with the attempts seen (a
   * re-delivery or a re-drive in between leaves it alone). Parameters: confirmed_at, id, attempts.
   */
  String confirmSentSql() {
    return "UPDATE outbox_message SET state = 'C', confirmed_at = ?"
        + " WHERE id = ? AND state = 'S' AND attempts = ?";
  }

  /**
   * {@code S → R} (re-drive, same operation ID) for a sent, unconfirmed job, only while it is still
   * {@code S} with the attempts seen and still has no confirmation. Parameters: last_error, id,
   * attempts.
   */
  String redriveSql() {
    return "UPDATE outbox_message SET state = 'R', deliver_after = "
        + now()
        + ", last_error = ?,"
        + " claim_token = NULL, lease_until = NULL"
        + " WHERE id = ? AND state = 'S' AND attempts = ? AND NOT EXISTS (SELECT 1"
        + " FROM outbox_confirmation c WHERE c.operation_id = outbox_message.operation_id"
        + " AND c.destination = outbox_message.destination)";
  }

  /**
   * {@code R}/{@code D} → {@code C} for a job the sink confirmed although the relay never recorded
   * it sent (a lost completion), only while it is still in the state and attempts seen. sent_at
   * keeps its value or becomes the confirmation time. Parameters: confirmed_at (for sent_at),
   * confirmed_at, id, state, attempts.
   */
  String acceptConfirmedSql() {
    return "UPDATE outbox_message SET state = 'C', sent_at = COALESCE(sent_at, ?), confirmed_at = ?,"
        + " claim_token = NULL, lease_until = NULL"
        + " WHERE id = ? AND state = ? AND attempts = ? AND state IN ('R', 'D')";
  }

  // ---- reconciliation: runs ------------------------------------------------------------------

  /**
   * Starts a run (started_at = now); the generated id is read back. Parameters: window_start,
   * window_end, triggered_by, owner, schedule_slot (null on demand).
   */
  String insertRunSql() {
    return "INSERT INTO outbox_reconciliation_run (window_start, window_end, triggered_by, owner,"
        + " schedule_slot, started_at) VALUES (?, ?, ?, ?, ?, "
        + now()
        + ")";
  }

  /**
   * Finishes a running run. Parameters: matched, sent_unconfirmed, confirmed_not_sent,
   * duplicate_effects, dead, pending, error, id.
   */
  String finishRunSql() {
    return "UPDATE outbox_reconciliation_run SET finished_at = "
        + now()
        + ", matched = ?,"
        + " sent_unconfirmed = ?, confirmed_not_sent = ?, duplicate_effects = ?, dead = ?,"
        + " pending = ?, error = ? WHERE id = ? AND finished_at IS NULL";
  }

  /**
   * Parameters: run_id, operation_id, message_id, destination, state, category, sent_at,
   * confirmed_count, last_error, action.
   */
  String insertItemSql() {
    return "INSERT INTO outbox_reconciliation_item (run_id, operation_id, message_id, destination,"
        + " state, category, sent_at, confirmed_count, last_error, action)"
        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  }

  /** Parameters: id. Columns: {@link #RUN_COLUMNS}. */
  String findRunSql() {
    return "SELECT " + RUN_COLUMNS + " FROM outbox_reconciliation_run WHERE id = ?";
  }

  /** The newest finished run. Columns: {@link #RUN_COLUMNS}. */
  String latestFinishedRunSql() {
    return "SELECT "
        + RUN_COLUMNS
        + " FROM outbox_reconciliation_run WHERE finished_at IS NOT NULL"
        + " ORDER BY finished_at DESC, id DESC"
        + firstRows("1");
  }

  /**
   * The newest finished runs, newest first, without items (the report page's history). Parameters:
   * limit. Columns: {@link #RUN_COLUMNS}.
   */
  String recentRunsSql() {
    return "SELECT "
        + RUN_COLUMNS
        + " FROM outbox_reconciliation_run WHERE finished_at IS NOT NULL"
        + " ORDER BY id DESC"
        + firstRows("?");
  }

  /** The newest run that finished with a verdict. Columns: {@link #RUN_COLUMNS}, database now. */
  String latestSuccessfulRunSql() {
    return "SELECT "
        + RUN_COLUMNS
        + ", "
        + now()
        + " FROM outbox_reconciliation_run"
        + " WHERE finished_at IS NOT NULL AND error IS NULL ORDER BY finished_at DESC, id DESC"
        + firstRows("1");
  }

  /** Parameters: schedule_slot. Columns: count. */
  String countRunsInSlotSql() {
    return "SELECT COUNT(*) FROM outbox_reconciliation_run WHERE schedule_slot = ?";
  }

  /**
   * Parameters: run_id. Columns: operation_id, message_id, destination, state, category, sent_at,
   * confirmed_count, last_error, action; by category, then operation ID.
   */
  String itemsSql() {
    return "SELECT operation_id, message_id, destination, state, category, sent_at, confirmed_count,"
        + " last_error, action FROM outbox_reconciliation_item WHERE run_id = ?"
        + " ORDER BY category, operation_id, id";
  }

  // ---- fleet lock ----------------------------------------------------------------------------

  /**
   * Takes an existing lock whose lease expired, or extends our own. Parameters: owner, lease
   * millis, name, owner.
   */
  String takeLockSql() {
    return "UPDATE outbox_lock SET owner = ?, lease_until = "
        + nowPlusMillisParam()
        + ","
        + " acquired_at = "
        + now()
        + " WHERE name = ? AND (lease_until < "
        + now()
        + " OR owner = ?)";
  }

  /**
   * Creates a lock that does not exist yet; 0 rows (or a unique violation) when it does.
   * Parameters: name, owner, lease millis. Default: a plain INSERT, whose loser's unique violation
   * the store reads as "taken".
   */
  String insertLockSql() {
    return "INSERT INTO outbox_lock (name, owner, lease_until, acquired_at) VALUES (?, ?, "
        + nowPlusMillisParam()
        + ", "
        + now()
        + ")";
  }

  /** Extends our own, unexpired lease. Parameters: lease millis, name, owner. */
  String renewLockSql() {
    return "UPDATE outbox_lock SET lease_until = "
        + nowPlusMillisParam()
        + " WHERE name = ? AND owner = ? AND lease_until >= "
        + now();
  }

  /** Ends our lease now. Parameters: name, owner. */
  String releaseLockSql() {
    return "UPDATE outbox_lock SET lease_until = " + now() + " WHERE name = ? AND owner = ?";
  }

  /** Parameters: name. Columns: owner, lease_until, database now. */
  String lockHolderSql() {
    return "SELECT owner, lease_until, " + now() + " FROM outbox_lock WHERE name = ?";
  }

  // ---- inbox ---------------------------------------------------------------------------------

  /**
   * Inserts the inbox row. On PostgreSQL it reports an existing row as 0 rows; elsewhere as a
   * unique violation, which fails only the statement. Either way a concurrent uncommitted insert of
   * the same key makes it wait for that transaction. Parameters: destination, operation_id,
   * payload_sha256, payload_bytes, message_id.
   */
  String inboxInsertSql() {
    return "INSERT INTO outbox_inbox (destination, operation_id, payload_sha256, payload_bytes,"
        + " message_id, applied_at, last_delivery_at) VALUES (?, ?, ?, ?, ?, "
        + now()
        + ", "
        + now()
        + ")";
  }

  /**
   * The committed row of a key, locked for this transaction. Parameters: destination, operation_id.
   */
  String inboxLockRowSql() {
    return "SELECT "
        + INBOX_COLUMNS
        + " FROM outbox_inbox WHERE destination = ? AND operation_id = ? FOR UPDATE";
  }

  /** Counts a repeat. Parameters: destination, operation_id. */
  String inboxCountRepeatSql() {
    return "UPDATE outbox_inbox SET deliveries = deliveries + 1, last_delivery_at = "
        + now()
        + " WHERE destination = ? AND operation_id = ?";
  }

  /**
   * Counts one application in the relay's {@code outbox_confirmation} (shared database).
   * Parameters: operation_id, destination, source.
   */
  abstract String inboxConfirmSql();

  /** The inbox ledger's row limit with one parameter. */
  String inboxLimit() {
    return " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY";
  }

  /**
   * Deletes at most n inbox rows applied before a time, oldest first. Parameters: {@link
   * #inboxDeleteBatchParams}.
   */
  abstract String inboxDeleteBatchSql();

  /** The parameters of {@link #inboxDeleteBatchSql}, in its order. Default: time, n. */
  List<Object> inboxDeleteBatchParams(Instant before, int n) {
    return List.of(before, n);
  }
}
