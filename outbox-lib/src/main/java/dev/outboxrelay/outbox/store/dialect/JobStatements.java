package dev.outboxrelay.outbox.store.dialect;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.UUID;

/**
 * The statements of a job's life on one database, for one outbox's names: the caller's enqueue and
 * its key heads, the relay's claim and token-checked transitions, the reaper and retention. Made by
 * {@link Dialect#jobs}; every fixed statement is rendered for the names when the set is made.
 * Parameters and columns are documented on the dialect's builder of each statement ({@link
 * Dialect}); a statement whose parameters vary comes as a {@link BoundSql}.
 *
 * <p>The claim runs in one of two shapes ({@link #claimLocksFirst()}): one statement in auto-commit
 * mode that returns the claimed rows ({@link #claim}), or, in one short transaction, a lock of the
 * candidates ({@link #lockReadySql()}), their claim ({@link #claimLocked}) and, where updates
 * return no rows ({@link #updateReturnsRows()}), a read-back ({@link #readClaimed}). Batches of
 * (id, token) pairs (completion, heartbeat) are one statement returning the ids changed, or a lock
 * of the pairs still held followed by an update of exactly those.
 */
public final class JobStatements {
  private final Dialect dialect;
  private final Renderer renderer;

  private final String insertIfAbsent;
  private final String latestUnfinishedBelow;
  private final String earliestUnfinished;
  private final String lockUnfinished;
  private final String promoteHead;
  private final String keyRun;
  private final String insertPayload;
  private final String payloadDigest;
  private final String deleteInsertedMessage;
  private final String findByOperationId;
  private final String findPayload;
  private final String claim;
  private final String lockReady;
  private final String renewLease;
  private final String markDelivered;
  private final String markForRetry;
  private final String markDead;
  private final String release;
  private final String insertAttempt;
  private final String lockExpiredLeases;
  private final String expireLease;
  private final String insertExpiredAttempt;

  JobStatements(Dialect dialect, OutboxTables tables) {
    this.dialect = dialect;
    this.renderer = new Renderer(tables);
    insertIfAbsent = renderer.render(dialect.insertIfAbsentSql());
    latestUnfinishedBelow = renderer.render(dialect.latestUnfinishedBelowSql());
    earliestUnfinished = renderer.render(dialect.earliestUnfinishedSql());
    lockUnfinished = renderer.render(dialect.lockUnfinishedSql());
    promoteHead = renderer.render(dialect.promoteHeadSql());
    keyRun = renderer.render(dialect.keyRunSql());
    insertPayload = renderer.render(dialect.insertPayloadSql());
    payloadDigest = renderer.render(dialect.payloadDigestSql());
    deleteInsertedMessage = renderer.render(dialect.deleteInsertedMessageSql());
    findByOperationId = renderer.render(dialect.findByOperationIdSql());
    findPayload = renderer.render(dialect.findPayloadSql());
    claim = dialect.claimLocksFirst() ? null : renderer.render(dialect.claimSql());
    lockReady = dialect.claimLocksFirst() ? renderer.render(dialect.lockReadySql()) : null;
    renewLease = renderer.render(dialect.renewLeaseSql());
    markDelivered = renderer.render(dialect.markDeliveredSql());
    markForRetry = renderer.render(dialect.markForRetrySql());
    markDead = renderer.render(dialect.markDeadSql());
    release = renderer.render(dialect.releaseSql());
    insertAttempt = renderer.render(dialect.insertAttemptSql());
    lockExpiredLeases = renderer.render(dialect.lockExpiredLeasesSql());
    expireLease = renderer.render(dialect.expireLeaseSql());
    insertExpiredAttempt = renderer.render(dialect.insertExpiredAttemptSql());
  }

  public Dialect dialect() {
    return dialect;
  }

  public OutboxTables tables() {
    return renderer.tables();
  }

  // ---- enqueue and key heads -----------------------------------------------------------------

  public String insertIfAbsentSql() {
    return insertIfAbsent;
  }

  public String latestUnfinishedBelowSql() {
    return latestUnfinishedBelow;
  }

  public String earliestUnfinishedSql() {
    return earliestUnfinished;
  }

  public String lockUnfinishedSql() {
    return lockUnfinished;
  }

  public String promoteHeadSql() {
    return promoteHead;
  }

  public String insertPayloadSql() {
    return insertPayload;
  }

  public String payloadDigestSql() {
    return payloadDigest;
  }

  public String deleteInsertedMessageSql() {
    return deleteInsertedMessage;
  }

  /** Parameters: operation_id. Columns: {@link Dialect#MESSAGE_COLUMNS}. */
  public String findByOperationIdSql() {
    return findByOperationId;
  }

  /** Parameters: message_id. Columns: message_id, body, size_bytes, sha256. */
  public String findPayloadSql() {
    return findPayload;
  }

  // ---- claim ---------------------------------------------------------------------------------

  /** Whether the claim locks its candidates first, in a transaction; see the class comment. */
  public boolean claimLocksFirst() {
    return dialect.claimLocksFirst();
  }

  /** Whether this database's updates return the rows they changed; see the class comment. */
  public boolean updateReturnsRows() {
    return dialect.updateReturnsRows();
  }

  /**
   * The isolation level of the claim's and retention's locking reads, when not the connection's.
   */
  public OptionalInt lockingReadIsolation() {
    return dialect.lockingReadIsolation();
  }

  /**
   * The one-statement claim of up to {@code limit} jobs, in auto-commit mode; its results may
   * follow update counts (a batch). Columns: {@link Dialect#CLAIM_COLUMNS}.
   */
  public BoundSql claim(UUID token, long leaseMillis, int limit) {
    if (claim == null) {
      throw new IllegalStateException(dialect.name() + " claims in two steps");
    }
    return new BoundSql(claim, dialect.claimParams(token, leaseMillis, limit));
  }

  /** Locks up to {@code limit} ready, due heads. Parameters: limit. Columns: id. */
  public String lockReadySql() {
    if (lockReady == null) {
      throw new IllegalStateException(dialect.name() + " claims in one statement");
    }
    return lockReady;
  }

  /** Claims the ids {@link #lockReadySql()} locked; returns their rows where updates do. */
  public BoundSql claimLocked(UUID token, long leaseMillis, List<Long> ids) {
    return renderer.render(dialect.claimLocked(token, leaseMillis, ids));
  }

  /**
   * The run of {@code key} from its just-promoted {@code head}, at most {@code limit} ready jobs.
   * Columns: id, state, due (1/0).
   */
  public BoundSql keyRun(String key, long head, int limit) {
    return new BoundSql(keyRun, dialect.keyRunParams(key, head, limit));
  }

  /**
   * Promotes each key's head and reads its run, at most {@code limit} jobs per key, in one
   * statement; null where the dialect does it key by key. Columns: ordering_key, id, state, due
   * (1/0), promoted (1/0).
   */
  public BoundSql promoteHeadsWithRuns(List<String> keys, int limit) {
    BoundSql b = dialect.promoteHeadsWithRuns(keys, limit);
    return b == null ? null : renderer.render(b);
  }

  /**
   * The hand-over's claim returning the claimed rows ({@link Dialect#CLAIM_COLUMNS}); null where
   * the dialect's update does not: then {@link #claimKeyRuns} and {@link #readClaimed}.
   */
  public BoundSql claimKeyRunsReturning(UUID token, long leaseMillis, List<Long> ids) {
    String sql = dialect.claimKeyRunsReturningSql(ids.size());
    return sql == null ? null : withTokenLeaseIds(sql, token, leaseMillis, ids);
  }

  /** {@code sql} rendered, with its parameters: token, lease millis, the ids. */
  private BoundSql withTokenLeaseIds(String sql, UUID token, long leaseMillis, List<Long> ids) {
    List<Object> params = new ArrayList<>(List.of(token, leaseMillis));
    params.addAll(ids);
    return new BoundSql(renderer.render(sql), params);
  }

  /**
   * The hand-over: claims the jobs of key runs the caller's transaction just read, those still
   * ready and due; read them back with {@link #readClaimed}.
   */
  public BoundSql claimKeyRuns(UUID token, long leaseMillis, List<Long> ids) {
    return withTokenLeaseIds(dialect.claimKeyRunsSql(ids.size()), token, leaseMillis, ids);
  }

  /**
   * The rows of {@code ids} claimed under {@code token}. Columns: {@link Dialect#CLAIM_COLUMNS}.
   */
  public BoundSql readClaimed(UUID token, List<Long> ids) {
    List<Object> params = new ArrayList<>();
    params.add(token);
    params.addAll(ids);
    return new BoundSql(renderer.render(dialect.readClaimedSql(ids.size())), params);
  }

  // ---- token-checked transitions -------------------------------------------------------------

  /** Most (id, token) pairs one batched statement takes; the store splits larger batches. */
  public int maxCompletionPairs() {
    return dialect.maxCompletionPairs();
  }

  public String renewLeaseSql() {
    return renewLease;
  }

  /** The batched heartbeat where updates return rows. Columns: id of each lease extended. */
  public BoundSql renewLeases(List<Long> ids, List<UUID> tokens, long leaseMillis) {
    return renderer.render(dialect.renewLeases(ids, tokens, leaseMillis));
  }

  /** Extends the leases of rows {@link #lockTokensHeld} locked. */
  public BoundSql renewLocked(List<Long> held, long leaseMillis) {
    List<Object> params = new ArrayList<>();
    params.add(leaseMillis);
    params.addAll(held);
    return new BoundSql(renderer.render(dialect.renewLockedSql(held.size())), params);
  }

  /**
   * The attempts recorded with {@code outcome} for {@code ids}. Columns: message_id, claim_token.
   */
  public BoundSql recordedAttempts(String outcome, List<Long> ids) {
    List<Object> params = new ArrayList<>();
    params.add(outcome);
    params.addAll(ids);
    return new BoundSql(renderer.render(dialect.recordedAttemptsSql(ids.size())), params);
  }

  public String markDeliveredSql() {
    return markDelivered;
  }

  /** W → S of many pairs in one statement where updates return rows. Columns: id completed. */
  public BoundSql markDeliveredAll(List<Long> ids, List<UUID> tokens) {
    return renderer.render(dialect.markDeliveredAll(ids, tokens));
  }

  /** Locks the rows of the pairs still {@code W} with their token. Columns: id. */
  public BoundSql lockTokensHeld(List<Long> ids, List<UUID> tokens) {
    return new BoundSql(
        renderer.render(dialect.lockTokensHeldSql(ids.size())), Dialect.tokenPairs(ids, tokens));
  }

  /** W → S of rows {@link #lockTokensHeld} locked. */
  public BoundSql markLockedDelivered(List<Long> held) {
    return new BoundSql(
        renderer.render(dialect.markLockedDeliveredSql(held.size())), List.copyOf(held));
  }

  public String markForRetrySql() {
    return markForRetry;
  }

  public String markDeadSql() {
    return markDead;
  }

  public String releaseSql() {
    return release;
  }

  public String insertAttemptSql() {
    return insertAttempt;
  }

  // ---- reaper and retention ------------------------------------------------------------------

  public String lockExpiredLeasesSql() {
    return lockExpiredLeases;
  }

  public String expireLeaseSql() {
    return expireLease;
  }

  public String insertExpiredAttemptSql() {
    return insertExpiredAttempt;
  }

  /**
   * Picks up to {@code limit} jobs finished more than {@code keepMillis} ago, in id order, locked
   * where the database can skip locked rows. Columns: id.
   */
  public BoundSql pickFinished(long keepMillis, int limit) {
    return renderer.render(dialect.pickFinished(keepMillis, limit));
  }

  /**
   * Deletes those of {@code picked} that are still finished more than {@code keepMillis} ago (their
   * bodies go with them). Returns the update count: jobs deleted.
   */
  public BoundSql deleteFinished(List<Long> picked, long keepMillis) {
    List<Object> params = new ArrayList<>(picked);
    params.add(-keepMillis);
    return new BoundSql(renderer.render(dialect.deleteFinishedSql(picked.size())), params);
  }

  /**
   * Deletes the attempts of those of {@code ids} whose job is gone (deleted in this transaction).
   */
  public BoundSql deleteAttemptsOfDeleted(List<Long> ids) {
    return new BoundSql(
        renderer.render(dialect.deleteAttemptsOfDeletedSql(ids.size())), List.copyOf(ids));
  }

  @Override
  public String toString() {
    return dialect + " jobs of " + renderer.tables();
  }
}
