package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.jdbc.Columns.MAX_TEXT;
import static dev.outboxrelay.outbox.jdbc.Columns.truncate;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.ConflictRetry;
import dev.outboxrelay.outbox.jdbc.JdbcStatements;
import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.JobStatements;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.store.dialect.ReadyNotifications;
import dev.outboxrelay.outbox.store.dialect.TypeBinding;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.IntFunction;
import javax.sql.DataSource;

/**
 * {@link OutboxStore} over JDBC: the relay's transitions (claim, lease, complete, fail, release,
 * reap) and retention. Statements come from the dialect's {@link JobStatements}, rendered for the
 * outbox's names when the store is made; this class only runs them in short transactions and maps
 * rows. A unit of work the database rolled back as a deadlock victim runs again ({@link
 * ConflictRetry}). SQL errors become {@link OutboxStoreException} naming the operation and row. The
 * caller's enqueue is {@code JdbcEnqueueStore} (next to {@code Outbox}, the layer above), the
 * operator's queries {@link JdbcOutboxAdminStore}.
 */
public class JdbcOutboxStore implements OutboxStore {
  /** The width of {@code outbox_attempt.relay_instance} (V7). */
  private static final int MAX_RELAY_INSTANCE = 200;

  private final DataSource dataSource;
  private final Dialect dialect;
  private final JobStatements jobs;
  private final TypeBinding binding;
  private final KeyHeads keyHeads;
  private final JobRows rows;

  public JdbcOutboxStore(DataSource dataSource, Dialect dialect) {
    this(dataSource, dialect, OutboxTables.DEFAULT);
  }

  /** A store of the outbox named by {@code tables}: its statements are rendered for those names. */
  public JdbcOutboxStore(DataSource dataSource, Dialect dialect, OutboxTables tables) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.jobs = dialect.jobs(Objects.requireNonNull(tables, "tables"));
    this.binding = dialect.binding();
    this.keyHeads = new KeyHeads(jobs);
    this.rows = new JobRows(binding);
  }

  /** Detects the dialect from one connection of {@code dataSource}. */
  public static JdbcOutboxStore create(DataSource dataSource) {
    return create(dataSource, OutboxTables.DEFAULT);
  }

  /**
   * Detects the dialect from one connection of {@code dataSource}; the outbox named by {@code
   * tables}.
   */
  public static JdbcOutboxStore create(DataSource dataSource, OutboxTables tables) {
    return new JdbcOutboxStore(dataSource, Dialects.detect(dataSource), tables);
  }

  public Dialect dialect() {
    return dialect;
  }

  /** The names of this store's tables. */
  public OutboxTables tables() {
    return jobs.tables();
  }

  /**
   * The notifications relays of this outbox listen for, when its database sends any: the dialect's,
   * for this outbox's names.
   */
  public Optional<ReadyNotifications> readyNotifications() {
    return dialect.readyNotifications().map(n -> n.forTables(jobs.tables()));
  }

  // ---- claim and token-checked transitions ---------------------------------------------------

  @Override
  public List<ClaimedJob> claimBatch(ClaimRequest r) {
    try {
      return retryingConflicts(
          () -> {
            try (Connection c = JdbcStatements.autoCommitConnection(dataSource)) {
              List<ClaimedJob> claimed = new ArrayList<>(claimOn(c, r));
              claimed.sort(Comparator.comparingLong(ClaimedJob::id));
              return claimed;
            }
          });
    } catch (SQLException e) {
      throw new OutboxStoreException("claim of up to " + r.limit() + " jobs failed", e);
    }
  }

  /**
   * The claim's statements on a connection the caller holds in auto-commit mode, in the dialect's
   * shape ({@link JobStatements}): one statement, or locking the candidates, claiming them and
   * (where updates return no rows) reading them back in one short transaction at the dialect's
   * isolation for locking reads. No retry, no ordering: {@link #claimBatch} adds those (the
   * benchmark's SQL limit runs this with nothing around it).
   */
  public List<ClaimedJob> claimOn(Connection c, ClaimRequest r) throws SQLException {
    UUID token = r.token();
    long leaseMillis = r.leaseFor().toMillis();
    int limit = r.limit();
    if (!jobs.claimLocksFirst()) {
      return Dialects.queryAfterCounts(
          c, jobs.claim(token, leaseMillis, limit), binding, rows::claimed);
    }
    return JdbcTransactions.inTransaction(
        c,
        jobs.lockingReadIsolation(),
        tx -> {
          List<Long> ids;
          try (PreparedStatement ps = tx.prepareStatement(jobs.lockReadySql())) {
            ps.setInt(1, limit);
            ids = Rows.list(ps, rs -> rs.getLong(1));
          }
          if (ids.isEmpty()) {
            return List.of();
          }
          BoundSql claim = jobs.claimLocked(token, leaseMillis, ids);
          if (jobs.updateReturnsRows()) {
            return Dialects.query(tx, claim, binding, rows::claimed);
          }
          Dialects.update(tx, claim, binding);
          return Dialects.query(tx, jobs.readClaimed(token, ids), binding, rows::claimed);
        });
  }

  @Override
  public boolean renewLease(long id, UUID token, Duration leaseFor) {
    return update(
            "renew lease of message " + id,
            jobs.renewLeaseSql(),
            ps -> {
              ps.setLong(1, leaseFor.toMillis());
              ps.setLong(2, id);
              binding.bindUuid(ps, 3, token);
            })
        == 1;
  }

  @Override
  public Set<Long> renewLeases(Map<Long, UUID> claims, Duration leaseFor) {
    if (claims.isEmpty()) {
      return Set.of();
    }
    List<Long> ids = claims.keySet().stream().sorted().toList();
    try {
      return retryingConflicts(
          () -> {
            try (Connection c = dataSource.getConnection()) {
              return JdbcTransactions.inTransaction(
                  c,
                  tx -> {
                    Set<Long> renewed = new HashSet<>();
                    for (List<Long> chunk : perStatement(ids)) {
                      renewed.addAll(
                          renewLeases(
                              tx,
                              chunk,
                              chunk.stream().map(claims::get).toList(),
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

  /**
   * Extends the leases of the pairs still held, in the caller's transaction; returns their ids. One
   * statement where updates return rows, else the pairs still held are locked and then extended.
   */
  private List<Long> renewLeases(Connection tx, List<Long> ids, List<UUID> tokens, long leaseMillis)
      throws SQLException {
    if (jobs.updateReturnsRows()) {
      return Dialects.query(
          tx, jobs.renewLeases(ids, tokens, leaseMillis), binding, rs -> rs.getLong(1));
    }
    List<Long> held =
        Dialects.query(tx, jobs.lockTokensHeld(ids, tokens), binding, rs -> rs.getLong(1));
    if (!held.isEmpty()) {
      Dialects.update(tx, jobs.renewLocked(held, leaseMillis), binding);
    }
    return held;
  }

  @Override
  public Set<Long> recordedUnder(List<ClaimedJob> claims, AttemptOutcome outcome) {
    try (Connection c = dataSource.getConnection()) {
      Set<Long> found = new HashSet<>();
      for (List<ClaimedJob> chunk : perStatement(claims)) {
        found.addAll(recordedUnder(c, chunk, outcome));
      }
      return found;
    } catch (SQLException e) {
      throw new OutboxStoreException(
          "reading back the " + outcome + " attempts of " + claims.size() + " claims failed", e);
    }
  }

  private Set<Long> recordedUnder(Connection tx, List<ClaimedJob> claims, AttemptOutcome outcome)
      throws SQLException {
    Set<Long> found = new HashSet<>();
    if (claims.isEmpty()) {
      return found;
    }
    Map<Long, UUID> tokens = new HashMap<>();
    claims.forEach(m -> tokens.put(m.id(), m.claimToken()));
    record Recorded(long id, UUID token) {}
    for (Recorded r :
        Dialects.query(
            tx,
            jobs.recordedAttempts(outcome.name(), claims.stream().map(ClaimedJob::id).toList()),
            binding,
            rs -> new Recorded(rs.getLong(1), binding.readUuid(rs, 2)))) {
      if (Objects.equals(tokens.get(r.id()), r.token())) {
        found.add(r.id());
      }
    }
    return found;
  }

  @Override
  public boolean markDelivered(ClaimedJob m, AttemptRecord attempt) {
    return transition(
        m,
        AttemptOutcome.DELIVERED,
        attempt,
        true,
        jobs.markDeliveredSql(),
        ps -> {
          ps.setLong(1, m.id());
          binding.bindUuid(ps, 2, m.claimToken());
        });
  }

  @Override
  public Set<Long> markDeliveredAll(List<DeliveredJob> jobs) {
    return markDeliveredAll(jobs, null).completed();
  }

  @Override
  public DeliveryBatch markDeliveredAll(List<DeliveredJob> jobs, HandOver handOver) {
    if (jobs.isEmpty()) {
      return new DeliveryBatch(Set.of(), List.of());
    }
    // Id order: concurrent batches that touch a common row (a stale claim) lock in the same order.
    List<DeliveredJob> sorted =
        jobs.stream().sorted(Comparator.comparingLong(j -> j.message().id())).toList();
    try {
      return retryingConflicts(
          () -> {
            try (Connection c = dataSource.getConnection()) {
              return JdbcTransactions.inTransaction(
                  c,
                  tx -> {
                    Set<Long> done = new HashSet<>();
                    for (List<DeliveredJob> chunk : perStatement(sorted)) {
                      done.addAll(
                          markDeliveredOn(
                              tx,
                              chunk.stream().map(j -> j.message().id()).toList(),
                              chunk.stream().map(j -> j.message().claimToken()).toList()));
                    }
                    insertAttempts(tx, sorted, done);
                    Set<String> doneKeys = new HashSet<>();
                    for (DeliveredJob j : sorted) {
                      if (done.contains(j.message().id()) && j.message().orderingKey() != null) {
                        doneKeys.add(j.message().orderingKey());
                      }
                    }
                    Set<String> runKeys = new HashSet<>(doneKeys);
                    runKeys.retainAll(handOver == null ? Set.of() : handOver.keys());
                    // The limit shared evenly among the keys handed over, each at least its head.
                    int share =
                        runKeys.isEmpty()
                            ? 0
                            : Math.max(1, handOver.claim().limit() / runKeys.size());
                    Map<String, KeyHeads.Promoted> heads =
                        keyHeads.promoteHeadsWithRuns(tx, doneKeys, runKeys, share, binding);
                    List<ClaimedJob> handedOver =
                        runKeys.isEmpty() ? List.of() : claimKeyRuns(tx, heads, handOver);
                    return new DeliveryBatch(done, handedOver);
                  });
            }
          });
    } catch (SQLException e) {
      throw new OutboxStoreException(
          "delivery of "
              + jobs.size()
              + " jobs (ids "
              + sorted.get(0).message().id()
              + ".."
              + sorted.get(sorted.size() - 1).message().id()
              + ") failed",
          e);
    }
  }

  /**
   * W → S for (id, token) pairs still held, in the caller's transaction on {@code tx}, at most
   * {@link JobStatements#maxCompletionPairs()}; returns the ids completed. One statement where
   * updates return rows, else the pairs still held are locked and then completed (the locks make
   * the update change exactly what the lock found). Records no attempt and promotes no head: {@link
   * #markDeliveredAll(List, HandOver)} does.
   */
  public List<Long> markDeliveredOn(Connection tx, List<Long> ids, List<UUID> tokens)
      throws SQLException {
    if (jobs.updateReturnsRows()) {
      return Dialects.query(tx, jobs.markDeliveredAll(ids, tokens), binding, rs -> rs.getLong(1));
    }
    List<Long> held =
        Dialects.query(tx, jobs.lockTokensHeld(ids, tokens), binding, rs -> rs.getLong(1));
    if (held.isEmpty()) {
      return held;
    }
    int changed = Dialects.update(tx, jobs.markLockedDelivered(held), binding);
    if (changed != held.size()) {
      throw new IllegalStateException(
          "completed "
              + changed
              + " of the "
              + held.size()
              + " locked jobs "
              + held
              + ": another transaction changed a locked row");
    }
    return held;
  }

  /**
   * The hand-over's claim, in the completion's transaction {@code tx}: the runs just read from each
   * handed-over key's new head ({@code heads}, promoted by this transaction, so it holds them), in
   * key order while the limit lasts, claimed in one statement under the hand-over's token and
   * lease; returned in id order. A job of a run that another transaction changed between the read
   * and the claim (an operator's cancel) leaves a gap: the run's jobs behind it are given back in
   * the same transaction, so a key never goes on past a job it did not claim.
   */
  private List<ClaimedJob> claimKeyRuns(
      Connection tx, Map<String, KeyHeads.Promoted> heads, HandOver handOver) throws SQLException {
    ClaimRequest r = handOver.claim();
    int left = r.limit();
    List<List<Long>> runs = new ArrayList<>();
    for (KeyHeads.Promoted key : heads.values()) {
      if (left == 0) {
        break;
      }
      List<Long> run = key.run().subList(0, Math.min(left, key.run().size()));
      left -= run.size();
      if (!run.isEmpty()) {
        runs.add(run);
      }
    }
    List<Long> ids = runs.stream().flatMap(List::stream).sorted().toList();
    if (ids.isEmpty()) {
      return List.of();
    }
    BoundSql returning = jobs.claimKeyRunsReturning(r.token(), r.leaseFor().toMillis(), ids);
    List<ClaimedJob> claimed;
    if (returning != null) {
      claimed =
          Dialects.query(tx, returning, binding, rows::claimed).stream()
              .sorted(Comparator.comparingLong(ClaimedJob::id))
              .toList();
    } else if (Dialects.update(
            tx, jobs.claimKeyRuns(r.token(), r.leaseFor().toMillis(), ids), binding)
        == 0) {
      return List.of();
    } else {
      claimed = Dialects.query(tx, jobs.readClaimed(r.token(), ids), binding, rows::claimed);
    }
    Set<Long> got = new HashSet<>();
    claimed.forEach(m -> got.add(m.id()));
    Set<Long> behindAGap = new HashSet<>();
    for (List<Long> run : runs) {
      int gap = 0;
      while (gap < run.size() && got.contains(run.get(gap))) {
        gap++;
      }
      behindAGap.addAll(run.subList(gap, run.size()));
    }
    behindAGap.retainAll(got);
    if (behindAGap.isEmpty()) {
      return claimed;
    }
    try (PreparedStatement ps = tx.prepareStatement(jobs.releaseSql())) {
      for (long id : behindAGap) {
        ps.setLong(1, id);
        binding.bindUuid(ps, 2, r.token());
        ps.addBatch();
      }
      ps.executeBatch();
    }
    return claimed.stream().filter(m -> !behindAGap.contains(m.id())).toList();
  }

  /** The attempt rows of a batched completion, one batched statement: DELIVERED or STALE. */
  private void insertAttempts(Connection c, List<DeliveredJob> delivered, Set<Long> done)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(jobs.insertAttemptSql())) {
      for (DeliveredJob j : delivered) {
        bindAttempt(
            ps,
            j.message(),
            done.contains(j.message().id()) ? AttemptOutcome.DELIVERED : AttemptOutcome.STALE,
            j.attempt());
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  @Override
  public boolean markForRetry(ClaimedJob m, Duration retryAfter, AttemptRecord attempt) {
    return transition(
        m,
        AttemptOutcome.RETRY,
        attempt,
        false,
        jobs.markForRetrySql(),
        ps -> {
          ps.setString(1, lastError(attempt));
          ps.setLong(2, Math.max(0, retryAfter.toMillis()));
          ps.setLong(3, m.id());
          binding.bindUuid(ps, 4, m.claimToken());
        });
  }

  @Override
  public boolean markDead(ClaimedJob m, AttemptRecord attempt) {
    return transition(
        m,
        AttemptOutcome.DEAD,
        attempt,
        true,
        jobs.markDeadSql(),
        ps -> {
          ps.setString(1, lastError(attempt));
          ps.setLong(2, m.id());
          binding.bindUuid(ps, 3, m.claimToken());
        });
  }

  @Override
  public boolean release(long id, UUID token) {
    return update(
            "release of message " + id,
            jobs.releaseSql(),
            ps -> {
              ps.setLong(1, id);
              binding.bindUuid(ps, 2, token);
            })
        == 1;
  }

  /**
   * Runs a token-checked transition and records the attempt in one transaction. When the transition
   * changes no row the attempt is still recorded, as {@code STALE}: the send happened, but its
   * result was not applied. A {@code finishing} transition (to {@code S} or {@code D}) also makes
   * the next job of the key its head, in the same transaction.
   */
  private boolean transition(
      ClaimedJob m,
      AttemptOutcome outcome,
      AttemptRecord attempt,
      boolean finishing,
      String sql,
      Binder binder) {
    String what = outcome + " of message " + m.id() + " (attempt " + m.attemptNo() + ")";
    try {
      return retryingConflicts(
          () -> {
            try (Connection c = dataSource.getConnection()) {
              return JdbcTransactions.inTransaction(
                  c,
                  tx -> {
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

  private void insertAttempt(Connection c, ClaimedJob m, AttemptOutcome outcome, AttemptRecord a)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(jobs.insertAttemptSql())) {
      bindAttempt(ps, m, outcome, a);
      ps.executeUpdate();
    }
  }

  private void bindAttempt(
      PreparedStatement ps, ClaimedJob m, AttemptOutcome outcome, AttemptRecord a)
      throws SQLException {
    ps.setLong(1, m.id());
    ps.setInt(2, m.attemptNo());
    binding.bindUuid(ps, 3, m.claimToken());
    binding.bindInstant(ps, 4, a.startedAt());
    ps.setLong(5, -a.elapsed().toMillis());
    ps.setString(6, outcome.name());
    ps.setString(7, truncate(a.errorClass(), 300));
    ps.setString(8, truncate(a.errorMessage(), MAX_TEXT));
    ps.setString(9, truncate(a.responseSummary(), MAX_TEXT));
    ps.setString(10, truncate(a.relayInstance(), MAX_RELAY_INSTANCE));
  }

  private static String lastError(AttemptRecord a) {
    String error =
        a.errorClass() == null ? a.errorMessage() : a.errorClass() + ": " + a.errorMessage();
    return truncate(error, MAX_TEXT);
  }

  // ---- reaper --------------------------------------------------------------------------------

  @Override
  public ReapResult releaseExpiredLeases(
      int maxAttempts, int limit, IntFunction<Duration> retryDelay) {
    try {
      return retryingConflicts(() -> reapOnce(maxAttempts, limit, retryDelay));
    } catch (SQLException e) {
      throw new OutboxStoreException("release of expired leases failed", e);
    }
  }

  private ReapResult reapOnce(int maxAttempts, int limit, IntFunction<Duration> retryDelay)
      throws SQLException {
    record Expired(long id, UUID token, int attempts, Instant claimedAt, String orderingKey) {}
    try (Connection conn = dataSource.getConnection()) {
      return JdbcTransactions.inTransaction(
          conn,
          c -> {
            List<Expired> expired;
            try (PreparedStatement ps = c.prepareStatement(jobs.lockExpiredLeasesSql())) {
              ps.setInt(1, limit);
              expired =
                  Rows.list(
                      ps,
                      rs ->
                          new Expired(
                              rs.getLong(1),
                              binding.readUuid(rs, 2),
                              rs.getInt(3),
                              binding.readInstant(rs, 4),
                              rs.getString(5)));
            }
            if (expired.isEmpty()) {
              return new ReapResult(0, 0);
            }
            // One batch per statement, not two round trips per row: the picked rows stay locked
            // until
            // this commits, and a heartbeat that wants one of them waits that long.
            Map<Long, String> errors = new HashMap<>();
            List<Expired> reaped = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(jobs.expireLeaseSql())) {
              for (Expired e : expired) {
                boolean last = e.attempts() + 1 >= maxAttempts;
                String error =
                    "lease expired: owner of claim "
                        + e.token()
                        + " did not finish attempt "
                        + (e.attempts() + 1)
                        + (last ? "; max attempts (" + maxAttempts + ") reached" : "");
                errors.put(e.id(), error);
                ps.setInt(1, maxAttempts);
                ps.setString(2, error);
                ps.setLong(3, last ? 0 : retryDelay.apply(e.attempts() + 1).toMillis());
                ps.setLong(4, e.id());
                binding.bindUuid(ps, 5, e.token());
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
            try (PreparedStatement ps = c.prepareStatement(jobs.insertExpiredAttemptSql())) {
              for (Expired e : reaped) {
                ps.setLong(1, e.id());
                ps.setInt(2, e.attempts() + 1);
                binding.bindUuid(ps, 3, e.token());
                binding.bindInstant(ps, 4, e.claimedAt());
                ps.setString(5, errors.get(e.id()));
                ps.addBatch();
              }
              ps.executeBatch();
            }
            List<Expired> dead =
                reaped.stream().filter(e -> e.attempts() + 1 >= maxAttempts).toList();
            List<String> deadKeys =
                dead.stream().map(Expired::orderingKey).filter(Objects::nonNull).toList();
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
      throw new IllegalArgumentException(
          "keep must not be negative and limit must be positive, were " + keep + " and " + limit);
    }
    long keepMillis = keep.toMillis();
    String what = "retention delete of up to " + limit + " jobs finished before now - " + keep;
    try {
      return retryingConflicts(
          () -> {
            try (Connection c = dataSource.getConnection()) {
              // One short transaction: the batch is picked (locked where the database can), the
              // jobs deleted by id, then the attempts of the ones deleted (no cascade since V9).
              return JdbcTransactions.inTransaction(
                  c,
                  jobs.lockingReadIsolation(),
                  tx -> {
                    List<Long> picked =
                        Dialects.query(
                            tx, jobs.pickFinished(keepMillis, limit), binding, rs -> rs.getLong(1));
                    int deleted = 0;
                    for (List<Long> chunk : perStatement(picked)) {
                      deleted +=
                          Dialects.update(tx, jobs.deleteFinished(chunk, keepMillis), binding);
                      Dialects.update(tx, jobs.deleteAttemptsOfDeleted(chunk), binding);
                    }
                    return deleted;
                  });
            }
          });
    } catch (SQLException e) {
      throw new OutboxStoreException(what + " failed", e);
    }
  }

  @Override
  public Optional<StoredPayload> findPayload(long messageId) {
    return query(
            "read of the out-of-band payload of message " + messageId,
            jobs.findPayloadSql(),
            ps -> ps.setLong(1, messageId),
            rs -> new StoredPayload(rs.getLong(1), rs.getString(2), rs.getInt(3), rs.getString(4)))
        .stream()
        .findFirst();
  }

  // ---- helpers -------------------------------------------------------------------------------

  /**
   * {@code items} in consecutive slices of at most {@link JobStatements#maxCompletionPairs()}, the
   * most one statement of the dialect takes (an id and token pair each; ids alone take fewer
   * parameters). Views of {@code items}, in its order.
   */
  private <T> List<List<T>> perStatement(List<T> items) {
    int step = jobs.maxCompletionPairs();
    List<List<T>> slices = new ArrayList<>();
    for (int from = 0; from < items.size(); from += step) {
      slices.add(items.subList(from, Math.min(items.size(), from + step)));
    }
    return slices;
  }

  private <T> T retryingConflicts(ConflictRetry.Work<T> work) throws SQLException {
    return ConflictRetry.run(dialect.errors()::isRetryableConflict, work);
  }

  private int update(String what, String sql, Binder binder) {
    return JdbcStatements.update(
        dataSource, dialect.errors()::isRetryableConflict, what, sql, binder);
  }

  private <T> List<T> query(String what, String sql, Binder binder, Rows.Mapper<T> mapper) {
    return JdbcStatements.query(dataSource, what, sql, binder, mapper);
  }
}
