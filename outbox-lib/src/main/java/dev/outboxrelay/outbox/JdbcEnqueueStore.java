package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.JobRows;
import dev.outboxrelay.outbox.store.KeyHeads;
import dev.outboxrelay.outbox.store.PayloadDigest;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.JobStatements;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.trace.TraceContextSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The caller's enqueue over JDBC: inserts a validated job on a connection the caller passes in, in
 * the caller's transaction (used by {@code Outbox}). It holds no connections of its own. Statements
 * come from the dialect's {@link JobStatements}, rendered for the outbox's table names when the
 * store is made; SQL errors become {@link OutboxStoreException} naming the operation ID.
 */
final class JdbcEnqueueStore {
  private final Dialect dialect;
  private final JobStatements jobs;
  private final KeyHeads keyHeads;
  private final JobRows rows;

  public JdbcEnqueueStore(Dialect dialect) {
    this(dialect, OutboxTables.DEFAULT);
  }

  /** Inserts into the outbox named by {@code tables}. */
  public JdbcEnqueueStore(Dialect dialect, OutboxTables tables) {
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.jobs = dialect.jobs(Objects.requireNonNull(tables, "tables"));
    this.keyHeads = new KeyHeads(jobs);
    this.rows = new JobRows(dialect.binding());
  }

  public Dialect dialect() {
    return dialect;
  }

  /** The names of this store's tables. */
  public OutboxTables tables() {
    return jobs.tables();
  }

  /**
   * Inserts a validated job on the caller's connection, or finds the identical existing one. Never
   * commits; throws {@link DuplicateOperationException} when the operation ID names a different
   * job. A by-reference job ({@link NewJob#byReference}) is two rows, the job with a reference and
   * its body in {@code outbox_payload}, both in the caller's transaction; on a connection in
   * auto-commit mode (no caller transaction) the two commit together in a short transaction of
   * their own, or a relay could claim the job before its body exists.
   */
  public EnqueueResult insert(Connection c, NewJob n) {
    OutboxMessage m = n.message();
    Duration delay = m.deliverAfter();
    if (delay.isNegative() || delay.compareTo(OutboxConfig.MAX_DELIVER_AFTER) > 0) {
      // Outbox.enqueue refuses it first, with the reason; a direct caller gets the same answer
      // here, before the connection is touched (toMillis() would overflow past Long.MAX_VALUE).
      throw new InvalidMessageException(
          "deliver_after",
          "delay "
              + delay
              + " is outside 0 to "
              + OutboxConfig.MAX_DELIVER_AFTER.toDays()
              + " days (OutboxConfig.MAX_DELIVER_AFTER)");
    }
    PayloadDigest digest = n.byReference() ? PayloadDigest.of(m.payload()) : null;
    try {
      if (digest != null && c.getAutoCommit()) {
        return JdbcTransactions.inTransaction(c, tx -> insertOnce(tx, n, digest));
      }
      return insertOnce(c, n, digest);
    } catch (SQLException e) {
      throw new OutboxStoreException("enqueue of operation_id '" + m.operationId() + "' failed", e);
    }
  }

  private EnqueueResult insertOnce(Connection c, NewJob n, PayloadDigest digest)
      throws SQLException {
    OutboxMessage m = n.message();
    Optional<Long> id = tryInsert(c, n, digest);
    if (id.isPresent()) {
      if (digest != null) {
        insertPayload(c, id.get(), m.payload(), digest);
      }
      return new EnqueueResult(id.get(), true);
    }
    StoredJob existing =
        rows.queryOne(c, jobs.findByOperationIdSql(), ps -> ps.setString(1, m.operationId()))
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "operation_id '" + m.operationId() + "' conflicted but no row holds it"));
    String difference = difference(c, existing, n, digest);
    if (difference != null) {
      throw new DuplicateOperationException(m.operationId(), existing.id(), difference);
    }
    return new EnqueueResult(existing.id(), false);
  }

  private Optional<Long> tryInsert(Connection c, NewJob n, PayloadDigest digest)
      throws SQLException {
    OutboxMessage m = n.message();
    boolean keyWait = m.orderingKey() != null && keyHeads.holdLatestUnfinished(c, m.orderingKey());
    try (PreparedStatement ps = c.prepareStatement(jobs.insertIfAbsentSql())) {
      ps.setString(1, m.operationId());
      ps.setString(2, m.destination());
      ps.setString(3, m.orderingKey());
      ps.setString(4, digest == null ? m.payload() : digest.reference());
      ps.setString(5, m.contentType());
      if (n.headersJson() == null) {
        ps.setNull(6, Types.VARCHAR);
      } else {
        ps.setString(6, n.headersJson());
      }
      ps.setLong(7, m.deliverAfter().toMillis());
      ps.setBoolean(8, digest != null);
      ps.setBoolean(9, keyWait);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(rs.getLong(1)) : Optional.empty();
      }
    } catch (SQLException e) {
      if (dialect.errors().isUniqueViolation(e)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /**
   * Stores the body of the job {@code id} just inserted. If that fails, the job row is removed
   * again before the error is thrown: on a database where a failed statement leaves the transaction
   * usable (H2), a caller that commits anyway must not commit a job without its body.
   */
  private void insertPayload(Connection c, long id, String body, PayloadDigest digest)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(jobs.insertPayloadSql())) {
      ps.setLong(1, id);
      ps.setString(2, body);
      ps.setInt(3, digest.sizeBytes());
      ps.setString(4, digest.sha256());
      ps.executeUpdate();
    } catch (SQLException e) {
      try (PreparedStatement ps = c.prepareStatement(jobs.deleteInsertedMessageSql())) {
        ps.setLong(1, id);
        ps.executeUpdate();
      } catch (SQLException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    }
  }

  private String difference(Connection c, StoredJob existing, NewJob n, PayloadDigest digest)
      throws SQLException {
    OutboxMessage m = n.message();
    if (!existing.destination().equals(m.destination())) {
      return "destination ('" + existing.destination() + "')";
    }
    if (!samePayload(c, existing, m.payload(), digest)) {
      return "payload";
    }
    if (!existing.contentType().equals(m.contentType())) {
      return "content_type ('" + existing.contentType() + "')";
    }
    if (!Objects.equals(existing.orderingKey(), m.orderingKey())) {
      return "ordering_key ('" + existing.orderingKey() + "')";
    }
    if (!withoutTraceContext(existing.headersJson()).equals(withoutTraceContext(n.headersJson()))) {
      return "headers (stored names: " + withoutTraceContext(existing.headersJson()).keySet() + ")";
    }
    return null;
  }

  /**
   * A job's headers without {@code traceparent} and {@code tracestate} (any case): the trace
   * context is where the enqueue ran, not part of the effect, and a relay sends its delivery span's
   * instead; re-enqueueing keeps the first job's.
   */
  private static Map<String, String> withoutTraceContext(String headersJson) {
    if (headersJson == null) {
      return Map.of();
    }
    Map<String, String> headers;
    try {
      headers = JobRows.parseHeaders(headersJson);
    } catch (IOException e) {
      throw new OutboxStoreException(
          "stored headers are not a JSON object of strings: " + headersJson, e);
    }
    headers
        .keySet()
        .removeIf(
            name ->
                name.equalsIgnoreCase(TraceContextSource.TRACEPARENT)
                    || name.equalsIgnoreCase(TraceContextSource.TRACESTATE));
    return headers;
  }

  /**
   * Compares real bodies, wherever each is stored: a by-reference body by its recorded size and
   * SHA-256 (not by the reference text, and without reading it back), so the same body is the same
   * job even when the inline threshold changed between the two enqueues.
   */
  private boolean samePayload(
      Connection c, StoredJob existing, String payload, PayloadDigest digest) throws SQLException {
    if (!existing.payloadByReference() && digest == null) {
      return existing.payload().equals(payload);
    }
    PayloadDigest stored;
    if (existing.payloadByReference()) {
      try (PreparedStatement ps = c.prepareStatement(jobs.payloadDigestSql())) {
        ps.setLong(1, existing.id());
        stored =
            Rows.list(ps, rs -> new PayloadDigest(rs.getInt(1), rs.getString(2).strip())).stream()
                .findFirst()
                .orElse(null);
      }
    } else {
      stored = PayloadDigest.of(existing.payload());
    }
    return (digest != null ? digest : PayloadDigest.of(payload)).equals(stored);
  }
}
