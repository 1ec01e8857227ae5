package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.store.dialect.OutboxDialect.readAll;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.DuplicateOperationException;
import dev.outboxrelay.outbox.EnqueueResult;
import dev.outboxrelay.outbox.InvalidMessageException;
import dev.outboxrelay.outbox.JobState;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.schema.OutboxTables;
import dev.outboxrelay.outbox.schema.TableRendering;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.JdbcTransactions;
import dev.outboxrelay.outbox.store.JdbcStatements.Binder;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.store.dialect.ReadyNotifications;
import dev.outboxrelay.outbox.trace.TraceContextSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * {@link OutboxStore} over JDBC. Statements come from the {@link OutboxDialect}; this class only
 * binds parameters, runs short transactions and maps rows. SQL errors become {@link
 * OutboxStoreException} naming the operation and row.
 */
public class JdbcOutboxStore implements OutboxStore {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<LinkedHashMap<String, String>> HEADERS = new TypeReference<>() {};
  /** Errors are stored truncated to the column width. */
  private static final int MAX_TEXT = 2000;
  /** The width of {@code outbox_attempt.relay_instance} (V7). */
  private static final int MAX_RELAY_INSTANCE = 200;
  /**
   * How often a unit of work the database rolled back as a deadlock victim (see {@link
   * OutboxDialect#isRetryableConflict}) is run again before the failure reaches the caller.
   */
  public static final int DEFAULT_CONFLICT_RETRIES = 3;
  /** Pause before the first such retry; doubled for each further one, plus jitter. */
  public static final Duration CONFLICT_RETRY_PAUSE = Duration.ofMillis(5);

  private final DataSource dataSource;
  private final OutboxDialect dialect;
  private final OutboxTables tables;
  /** Renders the statements run on caller connections ({@link #insert}). */
  private final TableRendering rendering;

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
    this.rendering = TableRendering.of(tables);
  }

  private JdbcOutboxStore(OutboxDialect dialect, OutboxTables tables) {
    this.dataSource = null;
    this.dialect = dialect;
    this.tables = Objects.requireNonNull(tables, "tables");
    this.rendering = TableRendering.of(tables);
  }

  /** A store that only inserts on connections its callers pass in (used by {@code Outbox}). */
  public static JdbcOutboxStore forCallerConnections(OutboxDialect dialect) {
    return forCallerConnections(dialect, OutboxTables.DEFAULT);
  }

  /** {@link #forCallerConnections(OutboxDialect)} for the outbox named by {@code tables}. */
  public static JdbcOutboxStore forCallerConnections(OutboxDialect dialect, OutboxTables tables) {
    return new JdbcOutboxStore(Objects.requireNonNull(dialect, "dialect"), tables);
  }

  /** Detects the dialect from one connection of {@code dataSource}. */
  public static JdbcOutboxStore create(DataSource dataSource) {
    return create(dataSource, OutboxTables.DEFAULT);
  }

  /** Detects the dialect from one connection of {@code dataSource}; the outbox named by {@code tables}. */
  public static JdbcOutboxStore create(DataSource dataSource, OutboxTables tables) {
    try (Connection c = dataSource.getConnection()) {
      return new JdbcOutboxStore(dataSource, DialectDetector.detect(c.getMetaData()), tables);
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot connect to detect the outbox dialect", e);
    }
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

  // ---- enqueue (caller's connection and transaction) -----------------------------------------

  /**
   * Inserts a validated job on the caller's connection, or finds the identical existing one.
   * Never commits; throws {@link DuplicateOperationException} when the operation ID names a
   * different job. A by-reference job ({@link NewMessage#byReference}) is two rows, the job with
   * a reference and its body in {@code outbox_payload}, both in the caller's transaction; on a
   * connection in auto-commit mode (no caller transaction) the two commit together in a short
   * transaction of their own, or a relay could claim the job before its body exists.
   */
  public EnqueueResult insert(Connection caller, NewMessage n) {
    OutboxMessage m = n.message();
    Duration delay = m.deliverAfter();
    if (delay.isNegative() || delay.compareTo(OutboxConfig.MAX_DELIVER_AFTER) > 0) {
      // Outbox.enqueue refuses it first, with the reason; a direct caller gets the same answer
      // here, before the connection is touched (toMillis() would overflow past Long.MAX_VALUE).
      throw new InvalidMessageException("deliver_after", "delay " + delay + " is outside 0 to "
          + OutboxConfig.MAX_DELIVER_AFTER.toDays() + " days (OutboxConfig.MAX_DELIVER_AFTER)");
    }
    Connection c = rendering.connection(caller);
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

  private EnqueueResult insertOnce(Connection c, NewMessage n, PayloadDigest digest) throws SQLException {
    OutboxMessage m = n.message();
    Optional<Long> id = tryInsert(c, n, digest);
    if (id.isPresent()) {
      if (digest != null) {
        insertPayload(c, id.get(), m.payload(), digest);
      }
      return new EnqueueResult(id.get(), true);
    }
    StoredMessage existing = queryOne(c, dialect.findByOperationIdSql(), ps -> ps.setString(1, m.operationId()))
        .orElseThrow(() -> new IllegalStateException(
            "operation_id '" + m.operationId() + "' conflicted but no row holds it"));
    String difference = difference(c, existing, n, digest);
    if (difference != null) {
      throw new DuplicateOperationException(m.operationId(), existing.id(), difference);
    }
    return new EnqueueResult(existing.id(), false);
  }

  private Optional<Long> tryInsert(Connection c, NewMessage n, PayloadDigest digest) throws SQLException {
    OutboxMessage m = n.message();
    boolean keyWait = m.orderingKey() != null && holdLatestUnfinished(c, m.orderingKey());
    try (PreparedStatement ps = c.prepareStatement(dialect.insertIfAbsentSql())) {
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
      if (dialect.isUniqueViolation(e)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /**
   * Share-locks the latest unfinished job of {@code key} in the caller's transaction and returns
   * true, or returns false when the key has none: the new job then waits behind it ({@code
   * key_wait}), and that job's final transition, which must update the locked row, waits for the
   * caller to commit and so sees the new job when it looks for the key's next head
   * (docs/design.md "Ordering keys"). The candidate is read without a lock and then locked by id;
   * one that finished meanwhile (or, under REPEATABLE READ, since the caller's snapshot) is passed
   * for the next lower one, so the walk ends.
   */
  private boolean holdLatestUnfinished(Connection c, String key) throws SQLException {
    long below = Long.MAX_VALUE;
    while (true) {
      long bound = below;
      Optional<Long> latest = extremeId(c, dialect.latestUnfinishedBelowSql(), ps -> {
        ps.setString(1, key);
        ps.setLong(2, bound);
      }, true);
      if (latest.isEmpty()) {
        return false;
      }
      try (PreparedStatement ps = c.prepareStatement(dialect.lockUnfinishedSql())) {
        ps.setLong(1, latest.get());
        if (!readAll(ps, rs -> rs.getLong(1)).isEmpty()) {
          return true;
        }
      }
      below = latest.get();
    }
  }

  /** The largest ({@code max}) or smallest id a query returns (one column, any rows). */
  private static Optional<Long> extremeId(Connection c, String sql, Binder binder, boolean max)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return readAll(ps, rs -> rs.getLong(1)).stream().reduce(max ? Math::max : Math::min);
    }
  }

  /**
   * After jobs of {@code keys} reached a final state in transaction {@code tx}: makes each key's
   * earliest unfinished job its head ({@code key_wait} cleared), in key order. A head that
   * finishes in another transaction meanwhile changes no row, and the next one is taken. Returns
   * the heads' ids.
   */
  private List<Long> promoteHeads(Connection tx, java.util.Collection<String> keys) throws SQLException {
    List<Long> heads = new java.util.ArrayList<>();
    for (String key : new java.util.TreeSet<>(keys)) {
      while (true) {
        Optional<Long> head = extremeId(tx, dialect.earliestUnfinishedSql(), ps -> ps.setString(1, key), false);
        if (head.isEmpty()) {
          break;
        }
        try (PreparedStatement ps = tx.prepareStatement(dialect.promoteHeadSql())) {
          ps.setLong(1, head.get());
          if (ps.executeUpdate() == 1) {
            heads.add(head.get());
            break;
          }
        }
      }
    }
    return heads;
  }

  /**
   * Stores the body of the job {@code id} just inserted. If that fails, the job row is removed
   * again before the error is thrown: on a database where a failed statement leaves the
   * transaction usable (H2), a caller that commits anyway must not commit a job without its body.
   */
  private void insertPayload(Connection c, long id, String body, PayloadDigest digest) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(dialect.insertPayloadSql())) {
      ps.setLong(1, id);
      ps.setString(2, body);
      ps.setInt(3, digest.sizeBytes());
      ps.setString(4, digest.sha256());
      ps.executeUpdate();
    } catch (SQLException e) {
      try (PreparedStatement ps = c.prepareStatement(dialect.deleteInsertedMessageSql())) {
        ps.setLong(1, id);
        ps.executeUpdate();
      } catch (SQLException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    }
  }

  private String difference(Connection c, StoredMessage existing, NewMessage n, PayloadDigest digest)
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
   * context is where the enqueue ran, not part of the effect, and a relay sends its delivery
   * span's instead; re-enqueueing keeps the first job's.
   */
  private static Map<String, String> withoutTraceContext(String headersJson) {
    if (headersJson == null) {
      return Map.of();
    }
    Map<String, String> headers;
    try {
      headers = JSON.readValue(headersJson, HEADERS);
    } catch (IOException e) {
      throw new OutboxStoreException("stored headers are not a JSON object of strings: " + headersJson, e);
    }
    headers.keySet().removeIf(name -> name.equalsIgnoreCase(TraceContextSource.TRACEPARENT)
        || name.equalsIgnoreCase(TraceContextSource.TRACESTATE));
    return headers;
  }

  /**
   * Compares real bodies, wherever each is stored: a by-reference body by its recorded size and
   * SHA-256 (not by the reference text, and without reading it back), so the same body is the
   * same job even when the inline threshold changed between the two enqueues.
   */
  private boolean samePayload(Connection c, StoredMessage existing, String payload, PayloadDigest digest)
      throws SQLException {
    if (!existing.payloadByReference() && digest == null) {
      return existing.payload().equals(payload);
    }
    PayloadDigest stored;
    if (existing.payloadByReference()) {
      try (PreparedStatement ps = c.prepareStatement(dialect.payloadDigestSql())) {
        ps.setLong(1, existing.id());
        stored = readAll(ps, rs -> new PayloadDigest(rs.getInt(1), rs.getString(2).strip()))
            .stream().findFirst().orElse(null);
      }
    } else {
      stored = PayloadDigest.of(existing.payload());
    }
    return (digest != null ? digest : PayloadDigest.of(payload)).equals(stored);
  }

  // ---- claim and token-checked transitions ---------------------------------------------------

  @Override
  public List<ClaimedMessage> claimBatch(ClaimRequest r) {
    try {
      return retryingConflicts(() -> {
        try (Connection c = JdbcStatements.autoCommitConnection(dataSource)) {
          List<ClaimedMessage> claimed = new java.util.ArrayList<>(
              dialect.claim(c, r.token(), r.leaseFor().toMillis(), r.limit(), this::claimed));
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
            List<Long> heads = promoteHeads(tx, sorted.stream().map(DeliveredJob::message)
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
      return readAll(ps, this::claimed);
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
              promoteHeads(tx, List.of(m.orderingKey()));
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
  public ReapResult releaseExpiredLeases(int maxAttempts, int limit) {
    try {
      return retryingConflicts(() -> reapOnce(maxAttempts, limit));
    } catch (SQLException e) {
      throw new OutboxStoreException("release of expired leases failed", e);
    }
  }

  private ReapResult reapOnce(int maxAttempts, int limit) throws SQLException {
    record Expired(long id, UUID token, int attempts, Instant claimedAt, String orderingKey) {}
    try (Connection conn = dataSource.getConnection()) {
      return JdbcTransactions.inTransaction(conn, c -> {
        List<Expired> expired;
        try (PreparedStatement ps = c.prepareStatement(dialect.lockExpiredLeasesSql())) {
          ps.setInt(1, limit);
          expired = readAll(ps, rs -> new Expired(rs.getLong(1), dialect.readUuid(rs, 2),
              rs.getInt(3), dialect.readInstant(rs, 4), rs.getString(5)));
        }
        int ready = 0;
        int dead = 0;
        for (Expired e : expired) {
          boolean last = e.attempts() + 1 >= maxAttempts;
          String error = "lease expired: owner of claim " + e.token() + " did not finish attempt "
              + (e.attempts() + 1) + (last ? "; max attempts (" + maxAttempts + ") reached" : "");
          int changed;
          try (PreparedStatement ps = c.prepareStatement(dialect.expireLeaseSql())) {
            ps.setInt(1, maxAttempts);
            ps.setString(2, error);
            ps.setLong(3, e.id());
            dialect.bindUuid(ps, 4, e.token());
            changed = ps.executeUpdate();
          }
          if (changed == 1) {
            try (PreparedStatement ps = c.prepareStatement(dialect.insertExpiredAttemptSql())) {
              ps.setLong(1, e.id());
              ps.setInt(2, e.attempts() + 1);
              dialect.bindUuid(ps, 3, e.token());
              dialect.bindInstant(ps, 4, e.claimedAt());
              ps.setString(5, error);
              ps.executeUpdate();
            }
            if (last) {
              if (e.orderingKey() != null) {
                promoteHeads(c, List.of(e.orderingKey()));
              }
              dead++;
            } else {
              ready++;
            }
          }
        }
        return new ReapResult(ready, dead);
      });
    }
  }

  // ---- inspection ----------------------------------------------------------------------------

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
            bindAll(ps, sql.params());
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
  public Map<Character, Long> countByState() {
    Map<Character, Long> counts = new LinkedHashMap<>();
    for (JobState s : JobState.values()) {
      counts.put(s.code(), 0L);
    }
    query("count by state", dialect.countByStateSql(), ps -> {}, rs -> {
      counts.put(rs.getString(1).charAt(0), rs.getLong(2));
      return null;
    });
    return counts;
  }

  @Override
  public Optional<Duration> oldestReadyAge() {
    return query("oldest ready age", dialect.oldestReadySql(), ps -> {}, rs -> {
      Instant oldest = dialect.readInstant(rs, 1);
      Instant now = dialect.readInstant(rs, 2);
      return oldest == null ? null : Duration.between(oldest, now);
    }).stream().filter(Objects::nonNull).findFirst();
  }

  @Override
  public Map<String, DestinationBacklog> backlogByDestination() {
    Map<String, DestinationBacklog> backlog = new java.util.TreeMap<>();
    query("backlog by destination", dialect.backlogByDestinationSql(), ps -> {}, rs -> {
      Instant oldest = dialect.readInstant(rs, 3);
      Instant now = dialect.readInstant(rs, 4);
      Duration age = oldest == null ? Duration.ZERO : Duration.between(oldest, now);
      backlog.put(rs.getString(1), new DestinationBacklog(rs.getLong(2), age));
      return null;
    });
    return backlog;
  }

  @Override
  public Instant databaseNow() {
    return query("database now", dialect.databaseNowSql(), ps -> {},
        rs -> dialect.readInstant(rs, 1)).get(0);
  }

  @Override
  public Optional<StoredMessage> findMessage(long id) {
    return query("read of message " + id, dialect.findMessageSql(), ps -> ps.setLong(1, id),
        this::stored).stream().findFirst();
  }

  @Override
  public Optional<StoredPayload> findPayload(long messageId) {
    return query("read of the out-of-band payload of message " + messageId, dialect.findPayloadSql(),
        ps -> ps.setLong(1, messageId), rs -> new StoredPayload(
            rs.getLong(1), rs.getString(2), rs.getInt(3), rs.getString(4))).stream().findFirst();
  }

  @Override
  public Optional<StoredMessage> findByOperationId(String operationId) {
    return query("read of operation_id '" + operationId + "'", dialect.findByOperationIdSql(),
        ps -> ps.setString(1, operationId), this::stored).stream().findFirst();
  }

  @Override
  public List<StoredAttempt> attempts(long messageId) {
    return query("attempts of message " + messageId, dialect.attemptsSql(),
        ps -> ps.setLong(1, messageId), rs -> new StoredAttempt(
            rs.getLong(1), rs.getInt(2), dialect.readUuid(rs, 3), instant(rs, 4), instant(rs, 5),
            AttemptOutcome.valueOf(rs.getString(6)), rs.getString(7), rs.getString(8), rs.getString(9),
            rs.getString(10)));
  }

  // ---- operator actions and inspection (admin API) -------------------------------------------

  @Override
  public List<MessageSummary> listMessages(MessageQuery q) {
    BoundSql sql = dialect.listMessages(q);
    return query("listing of " + q, sql.sql(), ps -> bindAll(ps, sql.params()), rs -> new MessageSummary(
        rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
        rs.getString(6).charAt(0), rs.getInt(7), rs.getString(8), rs.getString(9), instant(rs, 10),
        instant(rs, 11), instant(rs, 12), instant(rs, 13), instant(rs, 14), instant(rs, 15),
        instant(rs, 16)));
  }

  @Override
  public boolean replayDead(long id) {
    return update("replay of message " + id, dialect.replayDeadSql(), ps -> ps.setLong(1, id)) == 1;
  }

  @Override
  public boolean cancelReady(long id, String reason) {
    String error = truncate(reason, MAX_TEXT);
    try {
      return retryingConflicts(() -> {
        try (Connection conn = dataSource.getConnection()) {
          return JdbcTransactions.inTransaction(conn, c -> {
            try (PreparedStatement ps = c.prepareStatement(dialect.cancelReadySql())) {
              ps.setString(1, error);
              ps.setLong(2, id);
              if (ps.executeUpdate() != 1) {
                return false;
              }
            }
            try (PreparedStatement ps = c.prepareStatement(dialect.insertCancelAttemptSql())) {
              ps.setString(1, error);
              ps.setLong(2, id);
              ps.executeUpdate();
            }
            Optional<StoredMessage> cancelled = queryOne(c, dialect.findMessageSql(), ps -> ps.setLong(1, id));
            if (cancelled.isPresent() && cancelled.get().orderingKey() != null) {
              promoteHeads(c, List.of(cancelled.get().orderingKey()));
            }
            return true;
          });
        }
      });
    } catch (SQLException e) {
      throw new OutboxStoreException("cancel of message " + id + " failed", e);
    }
  }

  @Override
  public long countDead(DeadJobFilter f) {
    BoundSql sql = dialect.countDead(f.destination(), f.errorClass(), f.deadFrom(), f.deadTo(),
        f.orderingKey());
    return query("count of dead jobs matching " + f, sql.sql(), ps -> bindAll(ps, sql.params()),
        rs -> rs.getLong(1)).get(0);
  }

  @Override
  public int replayDead(DeadJobFilter f, int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive, was " + limit);
    }
    BoundSql sql = dialect.replayDead(f.destination(), f.errorClass(), f.deadFrom(), f.deadTo(),
        f.orderingKey(), limit);
    return update("replay of dead jobs matching " + f, sql.sql(), ps -> bindAll(ps, sql.params()));
  }

  @Override
  public Map<String, Map<Character, Long>> countByDestinationAndState() {
    Map<String, Map<Character, Long>> counts = new java.util.TreeMap<>();
    query("count by destination and state", dialect.countByDestinationAndStateSql(), ps -> {}, rs -> {
      counts.computeIfAbsent(rs.getString(1), d -> {
        Map<Character, Long> zero = new LinkedHashMap<>();
        for (JobState s : JobState.values()) {
          zero.put(s.code(), 0L);
        }
        return zero;
      }).put(rs.getString(2).charAt(0), rs.getLong(3));
      return null;
    });
    return counts;
  }

  @Override
  public List<DeadJobCount> countDeadByErrorClass() {
    return query("count of dead jobs by error class", dialect.countDeadByErrorClassSql(), ps -> {},
        rs -> new DeadJobCount(rs.getString(1), rs.getLong(2)));
  }

  @Override
  public List<DeadOrderingKey> deadOrderingKeys(int limit) {
    return query("ordering keys with dead jobs", dialect.deadOrderingKeysSql(), ps -> ps.setInt(1, limit),
        rs -> new DeadOrderingKey(rs.getString(1), rs.getLong(2), rs.getLong(3)));
  }

  // ---- helpers -------------------------------------------------------------------------------


  /**
   * Binds a dialect's parameters in order: times and tokens through the dialect's hooks (a
   * MariaDB DATETIME holds UTC, SQL Server has datetime2 and uniqueidentifier), the rest as is.
   */
  private void bindAll(PreparedStatement ps, List<Object> params) throws SQLException {
    for (int i = 0; i < params.size(); i++) {
      Object p = params.get(i);
      if (p instanceof Instant t) {
        dialect.bindInstant(ps, i + 1, t);
      } else if (p instanceof UUID u) {
        dialect.bindUuid(ps, i + 1, u);
      } else {
        ps.setObject(i + 1, p);
      }
    }
  }

  /** A unit of work that takes its own connection, so it can run again from the start. */
  @FunctionalInterface
  private interface Work<T> {
    T run() throws SQLException;
  }

  /**
   * Runs {@code work} and, while the database rolls it back as a deadlock victim, runs it again,
   * at most {@link #DEFAULT_CONFLICT_RETRIES} more times: the victim's transaction was undone
   * whole, so nothing of the failed run remains. Any other failure, or the last conflict, goes
   * to the caller.
   */
  private <T> T retryingConflicts(Work<T> work) throws SQLException {
    for (int retry = 0; ; retry++) {
      try {
        return work.run();
      } catch (SQLException e) {
        if (retry >= DEFAULT_CONFLICT_RETRIES || !dialect.isRetryableConflict(e)) {
          throw e;
        }
        pauseBeforeRetry(retry, e);
      }
    }
  }

  private static void pauseBeforeRetry(int retry, SQLException conflict) throws SQLException {
    long base = CONFLICT_RETRY_PAUSE.toMillis() << retry;
    try {
      Thread.sleep(base + java.util.concurrent.ThreadLocalRandom.current().nextLong(base + 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw conflict;
    }
  }


  private int update(String what, String sql, Binder binder) {
    try {
      return retryingConflicts(() -> JdbcStatements.executeUpdate(dataSource, sql, binder));
    } catch (SQLException e) {
      throw new OutboxStoreException(what + " failed", e);
    }
  }

    private <T> List<T> query(String what, String sql, Binder binder, OutboxDialect.RowMapper<T> mapper) {
    return JdbcStatements.query(dataSource, what, sql, binder, mapper);
  }

  private Optional<StoredMessage> queryOne(Connection c, String sql, Binder binder) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return readAll(ps, this::stored).stream().findFirst();
    }
  }

  private ClaimedMessage claimed(ResultSet rs) throws SQLException {
    return new ClaimedMessage(
        rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
        rs.getString(6), headers(rs.getString(7)), rs.getInt(8), dialect.readUuid(rs, 9),
        instant(rs, 10), instant(rs, 11), rs.getBoolean(12));
  }

  private StoredMessage stored(ResultSet rs) throws SQLException {
    return new StoredMessage(
        rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
        rs.getString(6), rs.getString(7), rs.getString(8).charAt(0), dialect.readUuid(rs, 9),
        instant(rs, 10), instant(rs, 11), rs.getInt(12), rs.getString(13), instant(rs, 14),
        instant(rs, 15), instant(rs, 16), instant(rs, 17), rs.getBoolean(18));
  }

  private Instant instant(ResultSet rs, int column) throws SQLException {
    return dialect.readInstant(rs, column);
  }

  private static Map<String, String> headers(String json) throws SQLException {
    if (json == null || json.isEmpty()) {
      return Map.of();
    }
    try {
      return JSON.readValue(json, HEADERS);
    } catch (IOException e) {
      throw new SQLException("headers column is not a JSON object of strings: " + json, e);
    }
  }

  private static String truncate(String s, int max) {
    return s == null || s.length() <= max ? s : s.substring(0, max - 1) + "…";
  }

}
