package dev.outboxrelay.outbox.store.dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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

  /** Columns returned by a claim, in this order. */
  public static final String CLAIM_COLUMNS =
      "id, operation_id, destination, ordering_key, payload, content_type, headers, attempts,"
          + " claim_token, created_at, lease_until";

  /** Every column of outbox_message, in this order. */
  public static final String MESSAGE_COLUMNS =
      "id, operation_id, destination, ordering_key, payload, content_type, headers, state,"
          + " claim_token, lease_until, deliver_after, attempts, last_error, created_at, claimed_at,"
          + " sent_at, confirmed_at";

  /** Short name; also the migration folder {@code db/outbox/<name>}. */
  public abstract String name();

  /** The database clock as an SQL expression. */
  protected abstract String now();

  /** SQL expression: database now plus a bigint parameter of milliseconds (may be negative). */
  protected abstract String nowPlusMillisParam();

  /** Flyway location of this dialect's migrations. */
  public String migrationLocation() {
    return "classpath:db/outbox/" + name();
  }

  // ---- enqueue -------------------------------------------------------------------------------

  /**
   * Inserts one job unless its operation ID exists; a query returning the new id, or no row
   * (or a unique violation, see {@link #isUniqueViolation}) when it exists. Parameters:
   * operation_id, destination, ordering_key, payload, content_type, headers, delay millis.
   */
  public abstract String insertIfAbsentSql();

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
    ps.setObject(index, instant == null ? null : OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
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
   * The claim's FIFO-per-key condition on the candidate row aliased {@code row}: a job with an
   * ordering key is claimable only while no earlier job (lower id) of its key is ready or
   * leased. So one job per key is in flight, in id order, across relays and across retries (a
   * job in backoff is {@code R} and holds its key back); jobs without a key and other keys are
   * not held back. A dead job ({@code D}) does not block its key: later jobs go on, and the dead
   * one waits, visible, for an operator (see README, "Ordering keys").
   */
  protected static String keyHeadCondition(String row) {
    return "(" + row + ".ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM outbox_message earlier"
        + " WHERE earlier.ordering_key = " + row + ".ordering_key AND earlier.id < " + row + ".id"
        + " AND earlier.state IN ('R', 'W')))";
  }

  // ---- token-checked transitions (parameters end with id, claim_token) -----------------------

  /** Extends the lease. Parameters: lease millis, id, token. */
  public String renewLeaseSql() {
    return "UPDATE outbox_message SET lease_until = " + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /** W → S. Parameters: id, token. */
  public String markDeliveredSql() {
    return "UPDATE outbox_message SET state = 'S', sent_at = " + now()
        + ", claim_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = NULL"
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
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
   * minus elapsed millis (started_at = now - elapsed), outcome, error_class, error_message,
   * response_summary.
   */
  public String insertAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, outcome,"
        + " error_class, error_message, response_summary) VALUES (?, ?, ?, " + nowPlusMillisParam()
        + ", ?, ?, ?, ?)";
  }

  // ---- reaper --------------------------------------------------------------------------------

  /**
   * Locks expired leases for the reaper, skipping rows other reapers hold. Runs inside a
   * transaction. Parameters: limit. Columns: id, claim_token, attempts, claimed_at.
   */
  public String lockExpiredLeasesSql() {
    return "SELECT id, claim_token, attempts, claimed_at FROM outbox_message"
        + " WHERE state = 'W' AND lease_until < " + now()
        + " ORDER BY lease_until LIMIT ? FOR UPDATE SKIP LOCKED";
  }

  /**
   * Returns one locked, expired lease to R (or D when attempts reach the maximum), invalidating
   * its token. Parameters: max attempts, last_error, id, token.
   */
  public String expireLeaseSql() {
    return "UPDATE outbox_message SET state = CASE WHEN attempts + 1 >= ? THEN 'D' ELSE 'R' END,"
        + " claim_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = ?"
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

  public String databaseNowSql() {
    return "SELECT " + now();
  }

  /** Parameters: id. Columns: {@link #MESSAGE_COLUMNS}. */
  public String findMessageSql() {
    return "SELECT " + MESSAGE_COLUMNS + " FROM outbox_message WHERE id = ?";
  }

  /** Parameters: operation_id. Columns: {@link #MESSAGE_COLUMNS}. */
  public String findByOperationIdSql() {
    return "SELECT " + MESSAGE_COLUMNS + " FROM outbox_message WHERE operation_id = ?";
  }

  /** Parameters: message_id. */
  public String attemptsSql() {
    return "SELECT message_id, attempt_no, claim_token, started_at, finished_at, outcome,"
        + " error_class, error_message, response_summary FROM outbox_attempt"
        + " WHERE message_id = ? ORDER BY id";
  }

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
