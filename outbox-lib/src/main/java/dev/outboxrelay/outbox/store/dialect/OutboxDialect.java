package dev.outboxrelay.outbox.store.dialect;

import dev.outboxrelay.outbox.store.MessageQuery;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The statements of one database. All times come from the database clock ({@link #now()}).
 * Statement parameters are documented on each method in order.
 */
public abstract class OutboxDialect {

  /**
   * Columns returned by a claim, in this order. Only outbox_message: a by-reference job's body
   * stays in outbox_payload until its sender loads it ({@link #findPayloadSql}).
   */
  public static final String CLAIM_COLUMNS =
      "id, operation_id, destination, ordering_key, payload, content_type, headers, attempts,"
          + " claim_token, created_at, lease_until, payload_by_ref";

  /** Every column of outbox_message, in this order. */
  public static final String MESSAGE_COLUMNS =
      "id, operation_id, destination, ordering_key, payload, content_type, headers, state,"
          + " claim_token, lease_until, deliver_after, attempts, last_error, created_at, claimed_at,"
          + " sent_at, confirmed_at, payload_by_ref, key_wait";

  /** Short name; also the migration folder {@code db/outbox/<name>}. */
  public abstract String name();

  /** The database clock as an SQL expression. */
  protected abstract String now();

  /** SQL expression: database now plus a bigint parameter of milliseconds (may be negative). */
  protected abstract String nowPlusMillisParam();

  /**
   * The notification this database sends when jobs are committed, for relays to wake up on;
   * empty when it has none (relays poll only).
   */
  public java.util.Optional<ReadyNotifications> readyNotifications() {
    return java.util.Optional.empty();
  }

  /** Flyway location of this dialect's migrations. */
  public String migrationLocation() {
    return "classpath:db/outbox/" + name();
  }

  // ---- enqueue -------------------------------------------------------------------------------

  /**
   * Inserts one job unless its operation ID exists; a query returning the new id, or no row
   * (or a unique violation, see {@link #isUniqueViolation}) when it exists. Parameters:
   * operation_id, destination, ordering_key, payload, content_type, headers, delay millis,
   * payload_by_ref, key_wait.
   */
  public abstract String insertIfAbsentSql();

  // ---- key heads (docs/design.md "Ordering keys") --------------------------------------------

  /** SQL literal of a false {@code key_wait}. */
  protected String keyWaitFalse() {
    return "FALSE";
  }

  /**
   * The latest unfinished ({@code R} or {@code W}) job of a key below an id, read without locks.
   * Parameters: ordering_key, id bound (exclusive). Columns: id; no row when there is none. Default:
   * one maximum per state, so an index on (ordering_key, state, id) answers each with one seek (the
   * store takes the larger).
   */
  public String latestUnfinishedBelowSql() {
    return "SELECT MAX(id) FROM outbox_message WHERE ordering_key = ? AND state IN ('R', 'W') AND id < ?"
        + " GROUP BY state";
  }

  /**
   * The earliest unfinished job of a key: its head. Parameters: ordering_key. Columns: id; no row
   * when there is none (the store takes the smallest).
   */
  public String earliestUnfinishedSql() {
    return "SELECT MIN(id) FROM outbox_message WHERE ordering_key = ? AND state IN ('R', 'W') GROUP BY state";
  }

  /**
   * Share-locks one job until the caller's transaction ends, if it is still unfinished: an
   * enqueue holds its key's latest unfinished job, so that job's final transition waits for the
   * enqueue to commit and then sees the new job. Parameters: id. Columns: id (no row: finished).
   */
  public String lockUnfinishedSql() {
    return "SELECT id FROM outbox_message WHERE id = ? AND state IN ('R', 'W') FOR SHARE";
  }

  /**
   * Makes one job its key's head (no longer waiting) while it is unfinished; 0 rows means it
   * finished meanwhile and the next one is the head. Parameters: id.
   */
  public String promoteHeadSql() {
    return "UPDATE outbox_message SET key_wait = " + keyWaitFalse() + " WHERE id = ? AND state IN ('R', 'W')";
  }

  /**
   * Stores the out-of-band body of a by-reference job just inserted, in the same transaction.
   * Parameters: message_id, body, size_bytes, sha256.
   */
  public String insertPayloadSql() {
    return "INSERT INTO outbox_payload (message_id, body, size_bytes, sha256) VALUES (?, ?, ?, ?)";
  }

  /**
   * The size and digest of a stored body, without the body (an idempotent re-enqueue compares
   * these). Parameters: message_id. Columns: size_bytes, sha256.
   */
  public String payloadDigestSql() {
    return "SELECT size_bytes, sha256 FROM outbox_payload WHERE message_id = ?";
  }

  /**
   * Removes a job inserted by the current enqueue whose body could not be stored, so that the
   * caller's transaction never holds a by-reference job without its body. Parameters: id.
   */
  public String deleteInsertedMessageSql() {
    return "DELETE FROM outbox_message WHERE id = ?";
  }

  /** True when the exception is a unique-key violation. */
  public boolean isUniqueViolation(SQLException e) {
    return "23505".equals(e.getSQLState());
  }

  // ---- binding (the store binds and reads tokens and times only through these) ---------------

  /** Binds a claim token (may be null). Default: the driver's native UUID type. */
  public void bindUuid(PreparedStatement ps, int index, UUID token) throws SQLException {
    ps.setObject(index, token);
  }

  /** Reads a claim token column (null stays null). */
  public UUID readUuid(ResultSet rs, int column) throws SQLException {
    return rs.getObject(column, UUID.class);
  }

  /** Binds a timestamp read earlier by {@link #readInstant}. Default: timestamp with time zone. */
  public void bindInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
    if (instant == null) {
      ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
    } else {
      ps.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
    }
  }

  /** Reads a timestamp column written by the database clock (null stays null). */
  public Instant readInstant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  /**
   * True when the database chose this statement's transaction as a deadlock victim (or failed it
   * as a serialization conflict) and rolled it back whole, so running the same unit of work again
   * is safe. The store retries such a failure a bounded number of times. Default: never.
   */
  public boolean isRetryableConflict(SQLException e) {
    return false;
  }

  // ---- claim ---------------------------------------------------------------------------------

  /**
   * Claims up to {@code limit} ready, due rows in one atomic step and returns a result set of
   * {@link #CLAIM_COLUMNS} for exactly the rows it changed. Runs on a connection in auto-commit
   * mode; a dialect that needs several statements wraps them in its own short transaction.
   */
  public abstract <T> List<T> claim(
      Connection c, UUID token, long leaseMillis, int limit, RowMapper<T> mapper) throws SQLException;

  /**
   * The claim's head condition on the candidate row aliased {@code row}: a ready job that does not
   * wait behind an earlier job of its key ({@code key_wait}, the index's condition), checked once
   * more against the key ({@link #keyHeadCondition}). {@code no} is the dialect's false literal.
   */
  protected static String readyHeadCondition(String row, String no) {
    return row + ".state = 'R' AND " + row + ".key_wait = " + no + " AND " + keyHeadCondition(row);
  }

  /**
   * The claim's FIFO-per-key condition on the candidate row aliased {@code row}: a job with an
   * ordering key is claimable only while no earlier job (lower id) of its key is ready or
   * leased. So one job per key is in flight, in id order, across relays and across retries (a
   * job in backoff is {@code R} and holds its key back); jobs without a key and other keys are
   * not held back. A dead job ({@code D}) does not block its key: later jobs go on, and the dead
   * one waits, visible, for an operator (see docs/library.md "Ordering keys"). With {@code
   * key_wait} this is one index probe per candidate: it only guards the rare job that does not
   * wait although an earlier one is unfinished (a replay, or two enqueues of a key at once).
   */
  protected static String keyHeadCondition(String row) {
    // One probe per state: on (ordering_key, state, id) each is a range bounded by the id, where
    // state IN ('R', 'W') would read every ready job of the key (MariaDB).
    return "(" + row + ".ordering_key IS NULL OR (" + earlierIn(row, "R") + " AND " + earlierIn(row, "W") + "))";
  }

  private static String earlierIn(String row, String state) {
    return "NOT EXISTS (SELECT 1 FROM outbox_message earlier WHERE earlier.ordering_key = " + row
        + ".ordering_key AND earlier.state = '" + state + "' AND earlier.id < " + row + ".id)";
  }

  /**
   * The key-affine hand-over: claims {@code n} heads the caller's transaction has just promoted
   * (and so holds), those still ready and due, as the claim does. Parameters: token, lease millis,
   * the n ids.
   */
  public String claimHeldHeadsSql(int n) {
    return "UPDATE outbox_message SET state = 'W', claim_token = ?, lease_until = " + nowPlusMillisParam()
        + ", claimed_at = " + now() + " WHERE state = 'R' AND key_wait = " + keyWaitFalse()
        + " AND deliver_after <= " + now() + " AND id IN " + placeholders(n);
  }

  /** The rows of {@code n} ids claimed under a token. Parameters: token, the n ids. Columns: {@link #CLAIM_COLUMNS}. */
  public String readClaimedSql(int n) {
    return "SELECT " + CLAIM_COLUMNS + " FROM outbox_message WHERE claim_token = ? AND id IN " + placeholders(n)
        + " ORDER BY id";
  }

  // ---- token-checked transitions (parameters end with id, claim_token) -----------------------

  /** Extends the lease. Parameters: lease millis, id, token. */
  public String renewLeaseSql() {
    return "UPDATE outbox_message SET lease_until = " + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /**
   * The batched heartbeat: extends to database now + {@code leaseMillis} the lease of every (id,
   * token) pair whose row is still {@code W} with that token, and returns the ids it extended; a
   * pair not returned has lost its claim. Runs inside the caller's transaction; at most {@link
   * #maxCompletionPairs()} pairs, in id order (the order of every other multi-row transition).
   *
   * <p>Default, for databases without {@code UPDATE ... RETURNING} (MariaDB): lock the rows that
   * still hold their tokens ({@link #lockTokensHeldSql}), then extend exactly those.
   */
  public List<Long> renewLeases(Connection tx, List<Long> ids, List<UUID> tokens, long leaseMillis)
      throws SQLException {
    List<Long> held = lockTokensHeld(tx, ids, tokens);
    if (held.isEmpty()) {
      return held;
    }
    try (PreparedStatement ps = tx.prepareStatement("UPDATE outbox_message SET lease_until = "
        + nowPlusMillisParam() + " WHERE state = 'W' AND id IN " + placeholders(held.size()))) {
      ps.setLong(1, leaseMillis);
      for (int i = 0; i < held.size(); i++) {
        ps.setLong(i + 2, held.get(i));
      }
      ps.executeUpdate();
    }
    return held;
  }

  /** Locks the rows of the (id, token) pairs still {@code W} with their token; returns their ids. */
  private List<Long> lockTokensHeld(Connection tx, List<Long> ids, List<UUID> tokens) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(lockTokensHeldSql(ids.size()))) {
      bindTokenPairs(ps, 1, ids, tokens);
      return readAll(ps, rs -> rs.getLong(1));
    }
  }

  /**
   * The attempts already recorded with one outcome for {@code n} jobs: a transition retried after
   * an answer that never came (the connection broke at commit, the process froze) reads back
   * whether its first try committed, instead of calling its own committed outcome stale.
   * Parameters: outcome, then the n message ids. Columns: message_id, claim_token.
   */
  public String recordedAttemptsSql(int n) {
    return "SELECT message_id, claim_token FROM outbox_attempt WHERE outcome = ? AND message_id IN "
        + placeholders(n);
  }

  /** W → S. Parameters: id, token. */
  public String markDeliveredSql() {
    return "UPDATE outbox_message " + deliveredAssignments() + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /** The assignments of W → S ({@code SET ...}), shared by the single and the batched completion. */
  protected String deliveredAssignments() {
    return "SET state = 'S', sent_at = " + now()
        + ", claim_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = NULL";
  }

  /** Most (id, token) pairs one completion statement takes; the store splits larger batches. */
  public int maxCompletionPairs() {
    return 1000;
  }

  /**
   * W → S for many jobs at once: each pair's row is completed only while it is {@code W} with that
   * token; the others (ownership lost) change nothing. Runs inside the caller's transaction and
   * returns the ids it completed. {@code ids} and {@code tokens} are parallel lists of at most
   * {@link #maxCompletionPairs()} pairs.
   *
   * <p>Default, for databases without {@code UPDATE ... RETURNING} (MariaDB): lock the rows that
   * still hold their tokens ({@link #lockTokensHeldSql}), then complete exactly those ({@link
   * #markLockedDeliveredSql}); the locks make the second statement change what the first found.
   */
  public List<Long> markDeliveredAll(Connection tx, List<Long> ids, List<UUID> tokens) throws SQLException {
    List<Long> held = lockTokensHeld(tx, ids, tokens);
    if (held.isEmpty()) {
      return held;
    }
    try (PreparedStatement ps = tx.prepareStatement(markLockedDeliveredSql(held.size()))) {
      for (int i = 0; i < held.size(); i++) {
        ps.setLong(i + 1, held.get(i));
      }
      int changed = ps.executeUpdate();
      if (changed != held.size()) {
        throw new IllegalStateException("completed " + changed + " of the " + held.size()
            + " locked jobs " + held + ": another transaction changed a locked row");
      }
    }
    return held;
  }

  /**
   * Locks the rows of {@code pairs} (id, token) pairs that are still {@code W} with their token.
   * Parameters: as {@link #tokenPairsCondition}. Columns: id.
   */
  public String lockTokensHeldSql(int pairs) {
    return "SELECT m.id FROM outbox_message m WHERE m.state = 'W' AND " + tokenPairsCondition("m", pairs)
        + " FOR UPDATE";
  }

  /** W → S of {@code n} rows locked by {@link #lockTokensHeldSql}. Parameters: the n ids. */
  public String markLockedDeliveredSql(int n) {
    return "UPDATE outbox_message " + deliveredAssignments() + " WHERE state = 'W' AND id IN "
        + placeholders(n);
  }

  /**
   * The completion statement of {@code pairs} (id, token) pairs that returns the ids it changed,
   * for dialects that complete in one statement; {@code null} (the default) when the dialect
   * locks first ({@link #lockTokensHeldSql}).
   */
  public String markDeliveredAllSql(int pairs) {
    return null;
  }

  /**
   * The row aliased {@code row} is one of {@code pairs} (id, token) pairs: an id list the primary
   * key index serves, then the pairs themselves. Parameters ({@link #bindTokenPairs}): the ids,
   * then each id and token.
   */
  protected static String tokenPairsCondition(String row, int pairs) {
    return row + ".id IN " + placeholders(pairs) + " AND (" + row + ".id, " + row + ".claim_token) IN ("
        + String.join(", ", java.util.Collections.nCopies(pairs, "(?, ?)")) + ")";
  }

  /** Binds {@link #tokenPairsCondition} from {@code first}; returns the next parameter index. */
  protected int bindTokenPairs(PreparedStatement ps, int first, List<Long> ids, List<UUID> tokens)
      throws SQLException {
    int p = first;
    for (Long id : ids) {
      ps.setLong(p++, id);
    }
    for (int i = 0; i < ids.size(); i++) {
      ps.setLong(p++, ids.get(i));
      bindUuid(ps, p++, tokens.get(i));
    }
    return p;
  }

  /** {@code (?, ?, ...)} with {@code n} placeholders. */
  protected static String placeholders(int n) {
    return "(" + String.join(", ", java.util.Collections.nCopies(n, "?")) + ")";
  }

  /** W → R after a backoff. Parameters: last_error, delay millis, id, token. */
  public String markForRetrySql() {
    return "UPDATE outbox_message SET state = 'R', claim_token = NULL, lease_until = NULL,"
        + " attempts = attempts + 1, last_error = ?, deliver_after = " + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /** W → D. Parameters: last_error, id, token. */
  public String markDeadSql() {
    return "UPDATE outbox_message SET state = 'D', claim_token = NULL, lease_until = NULL,"
        + " attempts = attempts + 1, last_error = ? WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /** W → R without counting an attempt. Parameters: id, token. */
  public String releaseSql() {
    return "UPDATE outbox_message SET state = 'R', claim_token = NULL, lease_until = NULL"
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /**
   * Records an attempt that just finished. Parameters: message_id, attempt_no, claim_token,
   * started_at (when the send started, on the database clock; null when unknown), minus elapsed
   * millis (started_at = now - elapsed when unknown), outcome, error_class, error_message,
   * response_summary, relay_instance.
   */
  public String insertAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, outcome,"
        + " error_class, error_message, response_summary, relay_instance) VALUES (?, ?, ?, COALESCE("
        + instantParam() + ", " + nowPlusMillisParam() + "), ?, ?, ?, ?, ?)";
  }

  /** A timestamp parameter bound by {@link #bindInstant}, typed for use inside an expression. */
  protected String instantParam() {
    return "CAST(? AS TIMESTAMP WITH TIME ZONE)";
  }

  // ---- reaper --------------------------------------------------------------------------------

  /**
   * Locks expired leases for the reaper, skipping rows other reapers hold. Runs inside a
   * transaction. Parameters: limit. Columns: id, claim_token, attempts, claimed_at, ordering_key.
   */
  public String lockExpiredLeasesSql() {
    return "SELECT id, claim_token, attempts, claimed_at, ordering_key FROM outbox_message"
        + " WHERE state = 'W' AND lease_until < " + now()
        + " ORDER BY lease_until LIMIT ? FOR UPDATE SKIP LOCKED";
  }

  /**
   * Returns one locked, expired lease to R (or D when attempts reach the maximum), invalidating
   * its token, due again after a retry delay (as after a failure). Parameters: max attempts,
   * last_error, retry delay millis, id, token.
   */
  public String expireLeaseSql() {
    return "UPDATE outbox_message SET state = CASE WHEN attempts + 1 >= ? THEN 'D' ELSE 'R' END,"
        + " claim_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = ?,"
        + " deliver_after = " + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W' AND lease_until < " + now();
  }

  /**
   * Records the attempt an expired lease stands for. Parameters: message_id, attempt_no,
   * claim_token, started_at (the claim time), error_message.
   */
  public String insertExpiredAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, outcome,"
        + " error_class, error_message) VALUES (?, ?, ?, ?, 'LEASE_EXPIRED', 'LeaseExpired', ?)";
  }

  // ---- inspection ----------------------------------------------------------------------------

  public String countByStateSql() {
    return "SELECT state, COUNT(*) FROM outbox_message GROUP BY state";
  }

  /**
   * Columns: since when the longest-waiting job has been waiting (null if none), database now.
   * A job never tried waits since its {@code deliver_after} once that is due; a job being retried
   * (attempts > 0, ready in backoff or in flight) waits since its first attempt started, so a
   * backlog that a failing sink keeps bouncing back into backoff still ages.
   */
  public String oldestReadySql() {
    return "SELECT MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "(SELECT MIN(a.started_at) FROM outbox_attempt a WHERE a.message_id = m.id),"
        + " m.deliver_after) END), " + now() + " FROM outbox_message m"
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= " + now() + "))";
  }

  /**
   * {@link #oldestReadySql()} grouped by destination, with the count of ready jobs due now.
   * Columns: destination, ready due jobs, since when the destination's longest-waiting job has
   * been waiting, database now. Same WHERE as {@link #oldestReadySql()}, so the scan starts from
   * {@code ix_outbox_message_due (state, deliver_after, id)} like it does.
   */
  public String backlogByDestinationSql() {
    return "SELECT m.destination,"
        + " SUM(CASE WHEN m.state = 'R' AND m.deliver_after <= " + now() + " THEN 1 ELSE 0 END),"
        + " MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "(SELECT MIN(a.started_at) FROM outbox_attempt a WHERE a.message_id = m.id),"
        + " m.deliver_after) END), " + now() + " FROM outbox_message m"
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= " + now() + "))"
        + " GROUP BY m.destination ORDER BY m.destination";
  }

  public String databaseNowSql() {
    return "SELECT " + now();
  }

  /** Parameters: id. Columns: {@link #MESSAGE_COLUMNS}. */
  public String findMessageSql() {
    return "SELECT " + MESSAGE_COLUMNS + " FROM outbox_message WHERE id = ?";
  }

  /**
   * The out-of-band body of one job, by its primary key. Parameters: message_id. Columns:
   * message_id, body, size_bytes, sha256.
   */
  public String findPayloadSql() {
    return "SELECT message_id, body, size_bytes, sha256 FROM outbox_payload WHERE message_id = ?";
  }

  /** Parameters: operation_id. Columns: {@link #MESSAGE_COLUMNS}. */
  public String findByOperationIdSql() {
    return "SELECT " + MESSAGE_COLUMNS + " FROM outbox_message WHERE operation_id = ?";
  }

  /** Parameters: message_id. */
  public String attemptsSql() {
    return "SELECT message_id, attempt_no, claim_token, started_at, finished_at, outcome,"
        + " error_class, error_message, response_summary, relay_instance FROM outbox_attempt"
        + " WHERE message_id = ? ORDER BY id";
  }

  // ---- admin: inspection and operator actions ------------------------------------------------

  /**
   * The latest failed attempt of the job aliased {@code m}, joined as {@code f} (null columns when
   * it never failed). Outcomes that changed the job's state by failing; a {@code STALE} attempt
   * (a late result of a lost claim) changed nothing and is not the job's diagnosis.
   */
  protected static final String LATEST_FAILURE_JOIN =
      " LEFT JOIN outbox_attempt f ON f.id = (SELECT MAX(a.id) FROM outbox_attempt a"
          + " WHERE a.message_id = m.id AND a.outcome IN ('RETRY', 'DEAD', 'LEASE_EXPIRED', 'CANCELLED'))";

  /** When a dead job died: its latest failure, else (set dead by hand) its creation. */
  protected static final String DIED_AT = "COALESCE(f.finished_at, m.created_at)";

  /** Columns of {@link #listMessages}, in this order. */
  public static final String SUMMARY_COLUMNS =
      "m.id, m.operation_id, m.destination, m.ordering_key, m.content_type, m.state, m.attempts,"
          + " m.last_error, f.error_class, f.finished_at, m.deliver_after, m.created_at, m.claimed_at,"
          + " m.lease_until, m.sent_at, m.confirmed_at";

  /** The character that makes the next one literal in a {@code LIKE} pattern ({@link #containsPattern}). */
  protected static final char LIKE_ESCAPE = '!';

  /** A job's time for the listing's range: its creation, or for a dead job the time it died. */
  protected static final String LISTED_AT = "CASE WHEN m.state = 'D' THEN " + DIED_AT + " ELSE m.created_at END";

  /**
   * One page of the listing, in id order; {@code q.limit()} rows at most. Columns: {@link
   * #SUMMARY_COLUMNS}. Keyset paging on the primary key, so a page costs its size, not its offset;
   * every condition of {@code q} is a bound parameter.
   */
  public BoundSql listMessages(MessageQuery q) {
    StringBuilder sql = new StringBuilder("SELECT " + SUMMARY_COLUMNS + " FROM outbox_message m"
        + LATEST_FAILURE_JOIN + " WHERE m.id > ?");
    List<Object> params = new ArrayList<>(List.of(q.afterId()));
    and(sql, params, "m.state = ?", q.state() == null ? null : String.valueOf(q.state()));
    and(sql, params, "m.destination = ?", q.destination());
    and(sql, params, "m.ordering_key = ?", q.orderingKey());
    and(sql, params, "f.error_class = ?", q.errorClass());
    and(sql, params, "m.operation_id LIKE ? ESCAPE '" + LIKE_ESCAPE + "'",
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
  public String containsPattern(String text) {
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
  protected boolean likeSpecial(char ch) {
    return ch == '%' || ch == '_' || ch == LIKE_ESCAPE;
  }

  /** Counts the dead jobs a filter matches. Columns: the count. */
  public BoundSql countDead(String destination, String errorClass, Instant diedFrom,
      Instant diedTo, String orderingKey) {
    StringBuilder sql = new StringBuilder("SELECT COUNT(*) FROM outbox_message m" + LATEST_FAILURE_JOIN
        + " WHERE m.state = 'D'");
    List<Object> params = new ArrayList<>();
    deadConditions(sql, params, destination, errorClass, diedFrom, diedTo, orderingKey);
    return new BoundSql(sql.toString(), params);
  }

  /**
   * Replays up to {@code limit} of the dead jobs a filter matches, lowest ids first: each
   * {@code D → R} as by {@link #replayDeadSql()}, conditional on still being {@code D}. Returns
   * the update count.
   */
  public BoundSql replayDead(String destination, String errorClass, Instant diedFrom,
      Instant diedTo, String orderingKey, int limit) {
    StringBuilder select = new StringBuilder("SELECT m.id FROM outbox_message m" + LATEST_FAILURE_JOIN
        + " WHERE m.state = 'D'");
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
  protected String updatePickedDead(String assignments, String pickIds) {
    return "UPDATE outbox_message " + assignments + " WHERE state = 'D' AND id IN (" + pickIds + ")";
  }

  private static void deadConditions(StringBuilder sql, List<Object> params, String destination,
      String errorClass, Instant diedFrom, Instant diedTo, String orderingKey) {
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

  /** A row limit taking one parameter, after ORDER BY. */
  protected String limitParam() {
    return " LIMIT ?";
  }

  /** The replay's assignments: a full attempt budget, due now, no claim. */
  private String replayAssignments() {
    // Not waiting: the claim's head check holds it back while an earlier job of its key is
    // unfinished, and no final transition of an earlier job may come to clear a wait.
    return "SET state = 'R', attempts = 0, deliver_after = " + now()
        + ", claim_token = NULL, lease_until = NULL, key_wait = " + keyWaitFalse();
  }

  /**
   * D → R for another full attempt budget, due now; the last error stays until the next attempt
   * replaces it. Conditional on {@code D}: 0 rows means unknown or not dead. Parameters: id.
   */
  public String replayDeadSql() {
    return "UPDATE outbox_message " + replayAssignments() + " WHERE id = ? AND state = 'D'";
  }

  /**
   * R → D by an operator. Conditional on {@code R}: a {@code W} job is in flight and cannot be
   * stopped mid-send. Parameters: last_error, id.
   */
  public String cancelReadySql() {
    return "UPDATE outbox_message SET state = 'D', last_error = ? WHERE id = ? AND state = 'R'";
  }

  /**
   * Records a cancel as the job's latest failure (so it has an error class and a time of death),
   * numbered as the attempt that will now not happen. Parameters: error_message, message_id.
   */
  public String insertCancelAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, started_at, outcome, error_class,"
        + " error_message) SELECT id, attempts + 1, " + now() + ", 'CANCELLED', 'Cancelled', ?"
        + " FROM outbox_message WHERE id = ?";
  }

  /** Columns: destination, state, count. */
  public String countByDestinationAndStateSql() {
    return "SELECT destination, state, COUNT(*) FROM outbox_message GROUP BY destination, state"
        + " ORDER BY destination, state";
  }

  /** Columns: error class (null when none), count; largest first. */
  public String countDeadByErrorClassSql() {
    return "SELECT f.error_class, COUNT(*) FROM outbox_message m" + LATEST_FAILURE_JOIN
        + " WHERE m.state = 'D' GROUP BY f.error_class ORDER BY 2 DESC, 1";
  }

  /**
   * Ordering keys with dead jobs, the oldest dead job first. Parameters: limit. Columns:
   * ordering_key, dead count, lowest dead id.
   */
  public String deadOrderingKeysSql() {
    return "SELECT ordering_key, COUNT(*), MIN(id) FROM outbox_message"
        + " WHERE state = 'D' AND ordering_key IS NOT NULL GROUP BY ordering_key ORDER BY 3"
        + limitParam();
  }

  // ---- retention -----------------------------------------------------------------------------

  /**
   * The rows retention may delete, on the row aliased {@code row}: sent ({@code S}) longer than the
   * keep age ago, or confirmed ({@code C}) longer ago (by {@code confirmed_at}; {@code sent_at}
   * for a row confirmed without one). Never {@code R}, {@code W} or {@code D}; a row whose time is
   * null is never deleted. One parameter: minus the keep age in millis (cutoff = database now +
   * it).
   */
  protected String finishedBeforeCondition(String row) {
    return row + ".state IN ('S', 'C') AND CASE WHEN " + row + ".state = 'C' THEN COALESCE("
        + row + ".confirmed_at, " + row + ".sent_at) ELSE " + row + ".sent_at END < "
        + nowPlusMillisParam();
  }

  /**
   * Deletes up to {@code limit} finished jobs ({@link #finishedBeforeCondition}) older than
   * {@code keepMillis} by the database clock, in one statement that holds its row locks only for
   * itself (auto-commit) and skips rows another transaction holds where the database can. Their
   * attempts and out-of-band bodies go with them ({@code ON DELETE CASCADE}). Returns the update
   * count: jobs deleted.
   */
  public abstract BoundSql deleteFinished(long keepMillis, int limit);

  /** Maps one row of a result set. */
  @FunctionalInterface
  public interface RowMapper<T> {
    T map(ResultSet rs) throws SQLException;
  }

  /** Runs a query and maps every row. */
  public static <T> List<T> readAll(PreparedStatement ps, RowMapper<T> mapper) throws SQLException {
    List<T> rows = new ArrayList<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        rows.add(mapper.map(rs));
      }
    }
    return rows;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName();
  }
}
