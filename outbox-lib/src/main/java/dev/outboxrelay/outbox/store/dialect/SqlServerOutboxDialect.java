package dev.outboxrelay.outbox.store.dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
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
 * database has READ_COMMITTED_SNAPSHOT on (a row version would show a row as still {@code R}
 * after another claimer took it). Under SNAPSHOT isolation the candidate scan would read the
 * transaction's snapshot, not the latest committed rows, and updating a row another claimer
 * changed since the snapshot fails with an update conflict (3960) instead of skipping it; READPAST
 * is not even accepted there without further locking hints. So the claim refuses to run inside a
 * transaction (the caller's isolation would apply) and sets READ COMMITTED itself.
 *
 * <p>Deadlocks designed out: the claim scans ready rows in clustered-key (id) order through
 * {@code ix_outbox_message_head (state, key_wait, id)} and every token-checked update seeks one
 * row by its clustered key, so claims and completions lock rows in the same order. A deadlock victim (1205)
 * that still happens (e.g. page locks under memory pressure) is retried by the store. A
 * retention job on SQL Server must delete finished rows in small batches ({@code DELETE TOP (n)
 * ... WITH (ROWLOCK, READPAST)}) from one relay at a time: one unbounded DELETE escalates to a
 * table lock past about 5,000 row locks and blocks or deadlocks every claim.
 */
public class SqlServerOutboxDialect extends OutboxDialect {
  /** Deadlock victim: SQL Server rolled the victim's whole transaction back. */
  private static final int DEADLOCK_VICTIM = 1205;
  /** Unique constraint (2627) and unique index (2601) violations. */
  private static final int UNIQUE_CONSTRAINT = 2627;
  private static final int UNIQUE_INDEX = 2601;

  @Override
  public String name() {
    return "sqlserver";
  }

  @Override
  protected String now() {
    return "SYSUTCDATETIME()";
  }

  // DATEADD takes no bigint (error 8116) and an int overflows past 24.8 days of milliseconds:
  // split the one bigint parameter into days and milliseconds inside a scalar sub-query.
  private static final String NOW_PLUS_MILLIS =
      "(SELECT DATEADD(MILLISECOND, CAST(p.ms % 86400000 AS INT),"
          + " DATEADD(DAY, CAST(p.ms / 86400000 AS INT), SYSUTCDATETIME()))"
          + " FROM (SELECT CAST(? AS BIGINT) AS ms) p)";

  @Override
  protected String nowPlusMillisParam() {
    return NOW_PLUS_MILLIS;
  }

  @Override
  public String insertIfAbsentSql() {
    // NOT EXISTS spares the usual re-enqueue an error (with XACT_ABORT ON an error dooms the
    // caller's transaction); a concurrent insert of the same ID still fails 2627, which the store
    // treats as "exists". No HOLDLOCK: its key-range lock would serialise every enqueue of a new
    // highest operation ID until the caller commits.
    return "INSERT INTO outbox_message (operation_id, destination, ordering_key, payload,"
        + " content_type, headers, deliver_after, payload_by_ref, key_wait) OUTPUT inserted.id"
        + " SELECT v.operation_id, v.destination, v.ordering_key, v.payload, v.content_type,"
        + " v.headers, v.deliver_after, v.payload_by_ref, v.key_wait FROM (SELECT ? AS operation_id,"
        + " ? AS destination, ? AS ordering_key, ? AS payload, ? AS content_type, ? AS headers, "
        + nowPlusMillisParam() + " AS deliver_after, ? AS payload_by_ref, ? AS key_wait) v"
        + " WHERE NOT EXISTS (SELECT 1 FROM outbox_message e WHERE e.operation_id = v.operation_id)";
  }

  @Override
  protected String keyWaitFalse() {
    return "0";
  }

  /** No FOR SHARE: a shared lock held by a table hint. */
  @Override
  public String lockUnfinishedSql() {
    // HOLDLOCK keeps the shared lock to the end of the caller's transaction, and makes it a
    // locking read even with READ_COMMITTED_SNAPSHOT on.
    return "SELECT id FROM outbox_message WITH (ROWLOCK, HOLDLOCK) WHERE id = ? AND state IN ('R', 'W')";
  }

  @Override
  public boolean isUniqueViolation(SQLException e) {
    return e.getErrorCode() == UNIQUE_CONSTRAINT || e.getErrorCode() == UNIQUE_INDEX;
  }

  @Override
  public boolean isRetryableConflict(SQLException e) {
    return e.getErrorCode() == DEADLOCK_VICTIM || "40001".equals(e.getSQLState());
  }

  // ---- binding -------------------------------------------------------------------------------

  @Override
  public void bindUuid(PreparedStatement ps, int index, UUID token) throws SQLException {
    // Text converts implicitly to uniqueidentifier (the higher type), so index seeks still work.
    if (token == null) {
      ps.setNull(index, Types.NVARCHAR);
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
    // datetime2 has no zone: the columns hold UTC wall-clock time.
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

  // ---- claim ---------------------------------------------------------------------------------

  /**
   * The claim batch. The guard refuses an open or implicit transaction ({@code @@OPTIONS & 2}:
   * IMPLICIT_TRANSACTIONS, which the driver uses when auto-commit is off). {@code OUTPUT ... INTO}
   * a table variable, then a SELECT of it: the client sees the claimed rows only after the UPDATE
   * completed (and, in auto-commit, committed), never a partial output of a failed statement.
   * Parameters: limit, token, lease millis.
   */
  static final String CLAIM_SQL =
      "SET NOCOUNT ON;"
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
          + " WHERE " + readyHeadCondition("c", "0") + " AND c.deliver_after <= SYSUTCDATETIME()"
          + " ORDER BY c.id)"
          + " UPDATE candidate SET state = 'W', claim_token = ?,"
          + " lease_until = " + NOW_PLUS_MILLIS + ", claimed_at = SYSUTCDATETIME()"
          + " OUTPUT inserted.id, inserted.operation_id, inserted.destination, inserted.ordering_key,"
          + " inserted.payload, inserted.content_type, inserted.headers, inserted.attempts,"
          + " inserted.claim_token, inserted.created_at, inserted.lease_until,"
          + " inserted.payload_by_ref INTO @claimed;"
          + " SELECT " + CLAIM_COLUMNS + " FROM @claimed ORDER BY id;";

  @Override
  public <T> List<T> claim(Connection c, UUID token, long leaseMillis, int limit, RowMapper<T> mapper)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CLAIM_SQL)) {
      ps.setInt(1, limit);
      bindUuid(ps, 2, token);
      ps.setLong(3, leaseMillis);
      boolean isResultSet = ps.execute();
      // SET NOCOUNT ON leaves only the final SELECT, but skip any update count a driver reports.
      while (!isResultSet) {
        if (ps.getUpdateCount() == -1) {
          throw new SQLException("the claim batch returned no result set");
        }
        isResultSet = ps.getMoreResults();
      }
      List<T> rows = new java.util.ArrayList<>();
      try (ResultSet rs = ps.getResultSet()) {
        while (rs.next()) {
          rows.add(mapper.map(rs));
        }
      }
      return rows;
    }
  }

  // ---- token-checked transitions ---------------------------------------------------------------

  @Override
  public String insertAttemptSql() {
    // One SYSUTCDATETIME() for started_at and finished_at: two calls in one statement may differ.
    // An int of milliseconds: one attempt's elapsed time stays far below 24.8 days.
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, finished_at,"
        + " outcome, error_class, error_message, response_summary, relay_instance)"
        + " SELECT ?, ?, ?, COALESCE(CAST(? AS DATETIME2(3)), DATEADD(MILLISECOND, CAST(? AS INT), n.t)),"
        + " n.t, ?, ?, ?, ?, ?"
        + " FROM (SELECT SYSUTCDATETIME() AS t) n";
  }

  @Override
  protected boolean likeSpecial(char ch) {
    // T-SQL's LIKE also reads [...] as a character class.
    return ch == '[' || super.likeSpecial(ch);
  }

  /** Two parameters per pair under the limit of 2,100 per statement. */
  @Override
  public int maxCompletionPairs() {
    return 1000;
  }

  /**
   * The pairs join in as a table value constructor; OUTPUT returns the ids changed (the statement
   * runs in the store's transaction, so a failure leaves no partial output behind). Every row is
   * sought by its clustered key, in the order of the other token-checked updates. Parameters: each
   * id and token.
   */
  @Override
  public String markDeliveredAllSql(int pairs) {
    return "UPDATE m " + deliveredAssignments() + " OUTPUT inserted.id FROM outbox_message m"
        + " JOIN (VALUES " + String.join(", ", java.util.Collections.nCopies(pairs, "(CAST(? AS BIGINT), ?)"))
        + ") AS d (id, claim_token) ON m.id = d.id AND m.claim_token = d.claim_token WHERE m.state = 'W'";
  }

  @Override
  public List<Long> markDeliveredAll(Connection tx, List<Long> ids, List<UUID> tokens) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(markDeliveredAllSql(ids.size()))) {
      for (int i = 0; i < ids.size(); i++) {
        ps.setLong(2 * i + 1, ids.get(i));
        bindUuid(ps, 2 * i + 2, tokens.get(i));
      }
      return readAll(ps, rs -> rs.getLong(1));
    }
  }

  /** Renewed rows come back through OUTPUT, sought by their clustered key as the completion is. */
  @Override
  public List<Long> renewLeases(Connection tx, List<Long> ids, List<UUID> tokens, long leaseMillis)
      throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement("UPDATE m SET lease_until = " + nowPlusMillisParam()
        + " OUTPUT inserted.id FROM outbox_message m JOIN (VALUES "
        + String.join(", ", java.util.Collections.nCopies(ids.size(), "(CAST(? AS BIGINT), ?)"))
        + ") AS d (id, claim_token) ON m.id = d.id AND m.claim_token = d.claim_token WHERE m.state = 'W'")) {
      ps.setLong(1, leaseMillis);
      for (int i = 0; i < ids.size(); i++) {
        ps.setLong(2 * i + 2, ids.get(i));
        bindUuid(ps, 2 * i + 3, tokens.get(i));
      }
      return readAll(ps, rs -> rs.getLong(1));
    }
  }

  // ---- reaper --------------------------------------------------------------------------------

  @Override
  public String lockExpiredLeasesSql() {
    // No LIMIT / FOR UPDATE SKIP LOCKED: TOP and the same skip-locked hints as the claim; the U
    // locks hold until the reaper's transaction commits.
    return "SELECT TOP (?) id, claim_token, attempts, claimed_at, ordering_key FROM outbox_message"
        + " WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK, ROWLOCK)"
        + " WHERE state = 'W' AND lease_until < SYSUTCDATETIME() ORDER BY lease_until";
  }

  // ---- admin ---------------------------------------------------------------------------------

  @Override
  protected String limitParam() {
    // No LIMIT: OFFSET/FETCH after the ORDER BY (also valid in the bulk replay's IN sub-query).
    return " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY";
  }

  // ---- inspection ----------------------------------------------------------------------------

  @Override
  public String oldestReadySql() {
    // No sub-query inside an aggregate (error 130): the first attempt comes through OUTER APPLY.
    return "SELECT MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "f.first_started, m.deliver_after) END), SYSUTCDATETIME() FROM outbox_message m"
        + " OUTER APPLY (SELECT MIN(a.started_at) AS first_started FROM outbox_attempt a"
        + " WHERE a.message_id = m.id) f"
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= SYSUTCDATETIME()))";
  }

  @Override
  public String backlogByDestinationSql() {
    // The same contract as the base statement; the first attempt through OUTER APPLY (error 130).
    return "SELECT m.destination,"
        + " SUM(CASE WHEN m.state = 'R' AND m.deliver_after <= SYSUTCDATETIME() THEN 1 ELSE 0 END),"
        + " MIN(CASE WHEN m.attempts = 0 THEN m.deliver_after ELSE COALESCE("
        + "f.first_started, m.deliver_after) END), SYSUTCDATETIME() FROM outbox_message m"
        + " OUTER APPLY (SELECT MIN(a.started_at) AS first_started FROM outbox_attempt a"
        + " WHERE a.message_id = m.id) f"
        + " WHERE m.state IN ('R', 'W')"
        + " AND (m.attempts > 0 OR (m.state = 'R' AND m.deliver_after <= SYSUTCDATETIME()))"
        + " GROUP BY m.destination ORDER BY m.destination";
  }

  // ---- retention -----------------------------------------------------------------------------

  @Override
  public BoundSql deleteFinished(long keepMillis, int limit) {
    // Small batches under row locks, skipping locked rows: an unbounded DELETE escalates to a table
    // lock past about 5,000 row locks and blocks every claim (see the class comment).
    return new BoundSql("DELETE TOP (?) FROM outbox_message WITH (ROWLOCK, READPAST) WHERE "
        + finishedBeforeCondition("outbox_message"), List.of(limit, -keepMillis));
  }
}
