package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.jdbc.Columns.MAX_TEXT;
import static dev.outboxrelay.outbox.jdbc.Columns.truncate;
import static dev.outboxrelay.outbox.store.dialect.OutboxDialect.readAll;

import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.ConflictRetry;
import dev.outboxrelay.outbox.jdbc.JdbcStatements;
import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import dev.outboxrelay.outbox.schema.OutboxTables;
import dev.outboxrelay.outbox.schema.TableRendering;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.store.dialect.ReadyNotifications;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.IntFunction;
import javax.sql.DataSource;

/**
 * {@link OutboxStore} over JDBC: the relay's transitions (claim, lease, complete, fail, release,
 * reap) and retention. Statements come from the {@link OutboxDialect}; this class only binds
 * parameters, runs short transactions and maps rows. A unit of work the database rolled back as
 * a deadlock victim runs again ({@link ConflictRetry}). SQL errors become {@link
 * OutboxStoreException} naming the operation and row. The caller's enqueue is {@link
 * JdbcEnqueueStore}, the operator's queries {@link JdbcOutboxAdminStore}.
 */
public class JdbcOutboxStore implements OutboxStore {
  /** The width of {@code outbox_attempt.relay_instance} (V7). */
  private static final int MAX_RELAY_INSTANCE = 200;

  private final DataSource dataSource;
  private final OutboxDialect dialect;
  private final OutboxTables tables;
  private final KeyHeads keyHeads;
  private final JobRows rows;

  public JdbcOutboxStore(DataSource dataSource, OutboxDialect dialect) {
    this(dataSource, dialect, OutboxTables.DEFAULT);
  }

  /**
   * A store of the outbox named by {@code tables}: every statement it runs on {@code dataSource}
   * is rendered for those names ({@link TableRendering}).
   */
  public JdbcOutboxStore(DataSource dataSource, OutboxDialect dialect, OutboxTables tables) {
    this.tables = Objects.requireNonNull(tables, "tables");
    this.dataSource = TableRendering.dataSource(Objects.requireNonNull(dataSource, "dataSource"), tables);
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.keyHeads = new KeyHeads(dialect);
    this.rows = new JobRows(dialect);
  }

  /** Detects the dialect from one connection of {@code dataSource}. */
  public static JdbcOutboxStore create(DataSource dataSource) {
    return create(dataSource, OutboxTables.DEFAULT);
  }

  /** Detects the dialect from one connection of {@code dataSource}; the outbox named by {@code tables}. */
  public static JdbcOutboxStore create(DataSource dataSource, OutboxTables tables) {
    return new JdbcOutboxStore(dataSource, Dialects.detect(dataSource), tables);
  }

  public OutboxDialect dialect() {
    return dialect;
  }

  /** The names of this store's tables. */
  public OutboxTables tables() {
    return tables;
  }

  /**
   * The notifications relays of this outbox listen for, when its database sends any: the
   * dialect's, for this outbox's names.
   */
  public Optional<ReadyNotifications> readyNotifications() {
    return dialect.readyNotifications().map(n -> n.forTables(tables));
  }

  // ---- claim and token-checked transitions ---------------------------------------------------

  @Override
  public List<ClaimedMessage> claimBatch(ClaimRequest r) {
    try {
      return retryingConflicts(() -> {
        try (Connection c = JdbcStatements.autoCommitConnection(dataSource)) {
          List<ClaimedMessage> claimed = new java.util.ArrayList<>(
              dialect.claim(c, r.token(), r.leaseFor().toMillis(), r.limit(), rows::claimed));
          claimed.sort((a, b) -> Long.compare(a.id(), b.id()));
          return claimed;
        }
      });
    } catch (SQLException e) {
      throw new OutboxStoreException("claim of up to " + r.limit() + " jobs failed", e);
    }
  }

  @Override
  public boolean renewLease(long id, UUID token, Duration leaseFor) {
    return update("renew lease of message " + id, dialect.renewLeaseSql(), ps -> {
      ps.setLong(1, leaseFor.toMillis());
      ps.setLong(2, id);
      dialect.bindUuid(ps, 3, token);
    }) == 1;
  }

  @Override
  public java.util.Set<Long> renewLeases(Map<Long, UUID> claims, Duration leaseFor) {
    if (claims.isEmpty()) {
      return java.util.Set.of();
    }
    List<Long> ids = claims.keySet().stream().sorted().toList();
    try {
      return retryingConflicts(() -> {
        try (Connection c = dataSource.getConnection()) {
          return JdbcTransactions.inTransaction(c, tx -> {
            java.util.Set<Long> renewed = new java.util.HashSet<>();
            int step = dialect.maxCompletionPairs();
            for (int from = 0; from < ids.size(); from += step) {
              List<Long> chunk = ids.subList(from, Math.min(ids.size(), from + step));
              renewed.addAll(dialect.renewLeases(tx, chunk, chunk.stream().map(claims::get).toList(),
                  leaseFor.toMillis()));
            }
            return renewed;
          });
        }
      });
    } catch (SQLException e) {
      throw new OutboxStoreException("renewing the leases of " + ids.size() + " claims failed", e);
    }
  }

  @Override
  public java.util.Set<Long> recordedUnder(List<ClaimedMessage> claims, AttemptOutcome outcome) {
    try (Connection c = dataSource.getConnection()) {
      java.util.Set<Long> found = new java.util.HashSet<>();
      int step = dialect.maxCompletionPairs();
      for (int from = 0; from < claims.size(); from += step) {
        found.addAll(recordedUnder(c, claims.subList(from, Math.min(claims.size(), from + step)), outcome));
      }
      return found;
    } catch (SQLException e) {
      throw new OutboxStoreException("reading back the " + outcome + " attempts of " + claims.size()
          + " claims failed", e);
    }
  }

  private java.util.Set<Long> recordedUnder(Connection tx, List<ClaimedMessage> jobs, AttemptOutcome outcome)
      throws SQLException {
    java.util.Set<Long> found = new java.util.HashSet<>();
    if (jobs.isEmpty()) {
      return found;
    }
    Map<Long, UUID> tokens = new java.util.HashMap<>();
    jobs.forEach(m -> tokens.put(m.id(), m.claimToken()));
    try (PreparedStatement ps = tx.prepareStatement(dialect.recordedAttemptsSql(jobs.size()))) {
      ps.setString(1, outcome.name());
      for (int i = 0; i < jobs.size(); i++) {
        ps.setLong(i + 2, jobs.get(i).id());
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long id = rs.getLong(1);
          if (Objects.equals(tokens.get(id), dialect.readUuid(rs, 2))) {
            found.add(id);
          }
        }
      }
    }
    return found;
  }

  @Override
  public boolean markDelivered(ClaimedMessage m, AttemptRecord attempt) {
    return transition(m, AttemptOutcome.DELIVERED, attempt, true, dialect.markDeliveredSql(), ps -> {
      ps.setLong(1, m.id());
      dialect.bindUuid(ps, 2, m.claimToken());
    });
  }

  @Override
  public java.util.Set<Long> markDeliveredAll(List<DeliveredJob> jobs) {
    return markDeliveredAll(jobs, null).completed();
  }

  @Override
  public DeliveryBatch markDeliveredAll(List<DeliveredJob> jobs, ClaimRequest handOver) {
    if (jobs.isEmpty()) {
      return new DeliveryBatch(java.util.Set.of(), List.of());
    }
    // Id order: concurrent batches that touch a common row (a stale claim) lock in the same order.
    List<DeliveredJob> sorted = jobs.stream()
        .sorted(java.util.Comparator.comparingLong(j -> j.message().id())).toList();
    try {
      return retryingConflicts(() -> {
        try (Connection c = dataSource.getConnection()) {
          return JdbcTransactions.inTransaction(c, tx -> {
            java.util.Set<Long> done = new java.util.HashSet<>();
            int step = dialect.maxCompletionPairs();
            for (int from = 0; from < sorted.size(); from += step) {
              List<DeliveredJob> chunk = sorted.subList(from, Math.min(sorted.size(), from + step));
              done.addAll(dialect.markDeliveredAll(tx, chunk.stream().map(j -> j.message().id()).toList(),
                  chunk.stream().map(j -> j.message().claimToken()).toList()));
            }
            insertAttempts(tx, sorted, done);
            List<Long> heads = keyHeads.promoteHeads(tx, sorted.stream().map(DeliveredJob::message)
                .filter(m -> done.contains(m.id()) && m.orderingKey() != null)
                .map(ClaimedMessage::orderingKey).toList());
            List<ClaimedMessage> handedOver = handOver == null || handOver.limit() <= 0 || heads.isEmpty()
                ? List.of() : claimHeads(tx, heads.subList(0, Math.min(heads.size(), handOver.limit())), handOver);
            return new DeliveryBatch(done, handedOver);
          });
        }
      });
    } catch (SQLException e) {
      throw new OutboxStoreException("delivery of " + jobs.size() + " jobs (ids " + sorted.get(0).message().id()
          + ".." + sorted.get(sorted.size() - 1).message().id() + ") failed", e);
    }
  }

  /**
   * Claims {@code heads} (just promoted, so this transaction holds their rows) that are ready and
   * due, under {@code r}'s token and lease; returns them in id order.
   */
  private List<ClaimedMessage> claimHeads(Connection tx, List<Long> heads, ClaimRequest r) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement(dialect.claimHeldHeadsSql(heads.size()))) {
      dialect.bindUuid(ps, 1, r.token());
      ps.setLong(2, r.leaseFor().toMillis());
      for (int i = 0; i < heads.size(); i++) {
        ps.setLong(3 + i, heads.get(i));
      }
      if (ps.executeUpdate() == 0) {
        return List.of();
      }
    }
    try (PreparedStatement ps = tx.prepareStatement(dialect.readClaimedSql(heads.size()))) {
      dialect.bindUuid(ps, 1, r.token());
      for (int i = 0; i < heads.size(); i++) {
        ps.setLong(2 + i, heads.get(i));
      }
      return readAll(ps, rows::claimed);
    }
  }

  /** The attempt rows of a batched completion, one batched statement: DELIVERED or STALE. */
  private void insertAttempts(Connection c, List<DeliveredJob> jobs, java.util.Set<Long> done)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(dialect.insertAttemptSql())) {
      for (DeliveredJob j : jobs) {
        bindAttempt(ps, j.message(),
            done.contains(j.message().id()) ? AttemptOutcome.DELIVERED : AttemptOutcome.STALE, j.attempt());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  @Override
  public boolean markForRetry(ClaimedMessage m, Duration retryAfter, AttemptRecord attempt) {
    return transition(m, AttemptOutcome.RETRY, attempt, false, dialect.markForRetrySql(), ps -> {
      ps.setString(1, lastError(attempt));
      ps.setLong(2, Math.max(0, retryAfter.toMillis()));
      ps.setLong(3, m.id());
      dialect.bindUuid(ps, 4, m.claimToken());
    });
  }

  @Override
  public boolean markDead(ClaimedMessage m, AttemptRecord attempt) {
    return transition(m, AttemptOutcome.DEAD, attempt, true, dialect.markDeadSql(), ps -> {
      ps.setString(1, lastError(attempt));
      ps.setLong(2, m.id());
      dialect.bindUuid(ps, 3, m.claimToken());
    });
  }

  @Override
  public boolean release(long id, UUID token) {
    return update("release of message " + id, dialect.releaseSql(), ps -> {
      ps.setLong(1, id);
      dialect.bindUuid(ps, 2, token);
    }) == 1;
  }

  /**
   * Runs a token-checked transition and records the attempt in one transaction. When the
   * transition changes no row the attempt is still recorded, as {@code STALE}: the send happened,
   * but its result was not applied. A {@code finishing} transition (to {@code S} or {@code D})
   * also makes the next job of the key its head, in the same transaction.
   */
  private boolean transition(ClaimedMessage m, AttemptOutcome outcome, AttemptRecord attempt,
      boolean finishing, String sql, Binder binder) {
    String what = outcome + " of message " + m.id() + " (attempt " + m.attemptNo() + ")";
    try {
      return retryingConflicts(() -> {
        try (Connection c = dataSource.getConnection()) {
          return JdbcTransactions.inTransaction(c, tx -> {
            int changed;
            try (PreparedStatement ps = tx.prepareStatement(sql)) {
              binder.bind(ps);
              changed = ps.executeUpdate();
            }
            insertAttempt(tx, m, changed == 1 ? outcome : AttemptOutcome.STALE, attempt);
            if (changed == 1 && finishing && m.orderingKey() != null) {
              keyHeads.promoteHeads(tx, List.of(m.orderingKey()));
            }
            return changed == 1;
          });
        }
      });
    } catch (SQLException e) {
      throw new OutboxStoreException(what + " failed", e);
    }
  }

  private void insertAttempt(Connection c, ClaimedMessage m, AttemptOutcome outcome, AttemptRecord a)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(dialect.insertAttemptSql())) {
      bindAttempt(ps, m, outcome, a);
      ps.executeUpdate();
    }
  }

  private void bindAttempt(PreparedStatement ps, ClaimedMessage m, AttemptOutcome outcome, AttemptRecord a)
      throws SQLException {
    ps.setLong(1, m.id());
    ps.setInt(2, m.attemptNo());
    dialect.bindUuid(ps, 3, m.claimToken());
    dialect.bindInstant(ps, 4, a.startedAt());
    ps.setLong(5, -a.elapsed().toMillis());
    ps.setString(6, outcome.name());
    ps.setString(7, truncate(a.errorClass(), 300));
    ps.setString(8, truncate(a.errorMessage(), MAX_TEXT));
    ps.setString(9, truncate(a.responseSummary(), MAX_TEXT));
    ps.setString(10, truncate(a.relayInstance(), MAX_RELAY_INSTANCE));
  }

  private static String lastError(AttemptRecord a) {
    String error = a.errorClass() == null ? a.errorMessage() : a.errorClass() + ": " + a.errorMessage();
    return truncate(error, MAX_TEXT);
  }

  // ---- reaper --------------------------------------------------------------------------------

  @Override
  public ReapResult releaseExpiredLeases(int maxAttempts, int limit, IntFunction<Duration> retryDelay) {
    try {
      return retryingConflicts(() -> reapOnce(maxAttempts, limit, retryDelay));
    } catch (SQLException e) {
      throw new OutboxStoreException("release of expired leases failed", e);
    }
  }

  private ReapResult reapOnce(int maxAttempts, int limit, IntFunction<Duration> retryDelay) throws SQLException {
    record Expired(long id, UUID token, int attempts, Instant claimedAt, String orderingKey) {}
    try (Connection conn = dataSource.getConnection()) {
      return JdbcTransactions.inTransaction(conn, c -> {
        List<Expired> expired;
        try (PreparedStatement ps = c.prepareStatement(dialect.lockExpiredLeasesSql())) {
          ps.setInt(1, limit);
          expired = readAll(ps, rs -> new Expired(rs.getLong(1), dialect.readUuid(rs, 2),
              rs.getInt(3), dialect.readInstant(rs, 4), rs.getString(5)));
        }
        if (expired.isEmpty()) {
          return new ReapResult(0, 0);
        }
        // One batch per statement, not two round trips per row: the picked rows stay locked until
        // this commits, and a heartbeat that wants one of them waits that long.
        Map<Long, String> errors = new HashMap<>();
        List<Expired> reaped = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(dialect.expireLeaseSql())) {
          for (Expired e : expired) {
            boolean last = e.attempts() + 1 >= maxAttempts;
            String error = "lease expired: owner of claim " + e.token() + " did not finish attempt "
                + (e.attempts() + 1) + (last ? "; max attempts (" + maxAttempts + ") reached" : "");
            errors.put(e.id(), error);
            ps.setInt(1, maxAttempts);
            ps.setString(2, error);
            ps.setLong(3, last ? 0 : retryDelay.apply(e.attempts() + 1).toMillis());
            ps.setLong(4, e.id());
            dialect.bindUuid(ps, 5, e.token());
            ps.addBatch();
          }
          int[] changed = ps.executeBatch();
          for (int i = 0; i < changed.length; i++) {
            // The rows are locked by this transaction, so each changes; a driver may answer
            // SUCCESS_NO_INFO (-2) for a statement of a batch.
            if (changed[i] != 0) {
              reaped.add(expired.get(i));
            }
          }
        }
        if (reaped.isEmpty()) {
          return new ReapResult(0, 0);
        }
        try (PreparedStatement ps = c.prepareStatement(dialect.insertExpiredAttemptSql())) {
          for (Expired e : reaped) {
            ps.setLong(1, e.id());
            ps.setInt(2, e.attempts() + 1);
            dialect.bindUuid(ps, 3, e.token());
            dialect.bindInstant(ps, 4, e.claimedAt());
            ps.setString(5, errors.get(e.id()));
            ps.addBatch();
          }
          ps.executeBatch();
        }
        List<Expired> dead = reaped.stream().filter(e -> e.attempts() + 1 >= maxAttempts).toList();
        List<String> deadKeys = dead.stream().map(Expired::orderingKey).filter(Objects::nonNull).toList();
        if (!deadKeys.isEmpty()) {
          keyHeads.promoteHeads(c, deadKeys);
        }
        return new ReapResult(reaped.size() - dead.size(), dead.size());
      });
    }
  }

  // ---- retention -----------------------------------------------------------------------------

  @Override
  public int deleteFinishedBefore(Duration keep, int limit) {
    if (keep.isNegative() || limit <= 0) {
      throw new IllegalArgumentException("keep must not be negative and limit must be positive, were "
          + keep + " and " + limit);
    }
    BoundSql sql = dialect.deleteFinished(keep.toMillis(), limit);
    String what = "retention delete of up to " + limit + " jobs finished before now - " + keep;
    try {
      return retryingConflicts(() -> {
        try (Connection c = JdbcStatements.autoCommitConnection(dataSource)) {
          int isolation = c.getTransactionIsolation();
          // READ COMMITTED: under InnoDB's REPEATABLE READ the rows a DML statement's sub-select
          // reads get shared next-key locks, which would hold back claims and enqueues.
          c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
          try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
            Dialects.bindAll(ps, sql.params(), dialect);
            return ps.executeUpdate();
          } finally {
            c.setTransactionIsolation(isolation);
          }
        }
      });
    } catch (SQLException e) {
      throw new OutboxStoreException(what + " failed", e);
    }
  }

  @Override
  public Optional<StoredPayload> findPayload(long messageId) {
    return query("read of the out-of-band payload of message " + messageId, dialect.findPayloadSql(),
        ps -> ps.setLong(1, messageId), rs -> new StoredPayload(
            rs.getLong(1), rs.getString(2), rs.getInt(3), rs.getString(4))).stream().findFirst();
  }

  // ---- helpers -------------------------------------------------------------------------------

  private <T> T retryingConflicts(ConflictRetry.Work<T> work) throws SQLException {
    return ConflictRetry.run(dialect::isRetryableConflict, work);
  }

  private int update(String what, String sql, Binder binder) {
    return JdbcStatements.update(dataSource, dialect::isRetryableConflict, what, sql, binder);
  }

  private <T> List<T> query(String what, String sql, Binder binder, OutboxDialect.RowMapper<T> mapper) {
    return JdbcStatements.query(dataSource, what, sql, binder, mapper);
  }
}
