package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.jdbc.Columns.MAX_TEXT;
import static dev.outboxrelay.outbox.jdbc.Columns.truncate;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.ConflictRetry;
import dev.outboxrelay.outbox.jdbc.JdbcStatements;
import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.dialect.AdminStatements;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.Listing;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * {@link OutboxAdminStore} over JDBC: the counts and ages the gauges read, the jobs and attempts an
 * operator inspects, and the operator's replay and cancel. Statements come from the dialect's
 * {@link AdminStatements}, rendered for the outbox's names when the store is made; SQL errors
 * become {@link OutboxStoreException} naming the operation.
 */
public class JdbcOutboxAdminStore implements OutboxAdminStore {
  private final DataSource dataSource;
  private final Dialect dialect;
  private final AdminStatements admin;
  private final KeyHeads keyHeads;
  private final JobRows rows;

  public JdbcOutboxAdminStore(DataSource dataSource, Dialect dialect) {
    this(dataSource, dialect, OutboxTables.DEFAULT);
  }

  /** The outbox named by {@code tables}: its statements are rendered for those names. */
  public JdbcOutboxAdminStore(DataSource dataSource, Dialect dialect, OutboxTables tables) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    Objects.requireNonNull(tables, "tables");
    this.admin = dialect.admin(tables);
    this.keyHeads = new KeyHeads(dialect.jobs(tables));
    this.rows = new JobRows(dialect.binding());
  }

  /** Detects the dialect from one connection of {@code dataSource}. */
  public static JdbcOutboxAdminStore create(DataSource dataSource) {
    return create(dataSource, OutboxTables.DEFAULT);
  }

  /**
   * Detects the dialect from one connection of {@code dataSource}; the outbox named by {@code
   * tables}.
   */
  public static JdbcOutboxAdminStore create(DataSource dataSource, OutboxTables tables) {
    return new JdbcOutboxAdminStore(dataSource, Dialects.detect(dataSource), tables);
  }

  // ---- counts and ages (gauges, stats) -------------------------------------------------------

  @Override
  public Map<Character, Long> countByState() {
    Map<Character, Long> counts = new LinkedHashMap<>();
    for (JobState s : JobState.values()) {
      counts.put(s.code(), 0L);
    }
    query(
        "count by state",
        admin.countByStateSql(),
        ps -> {},
        rs -> {
          counts.put(rs.getString(1).charAt(0), rs.getLong(2));
          return null;
        });
    return counts;
  }

  @Override
  public Optional<Duration> oldestReadyAge() {
    return query(
            "oldest ready age",
            admin.oldestReadySql(),
            ps -> {},
            rs -> {
              Instant oldest = rows.instant(rs, 1);
              Instant now = rows.instant(rs, 2);
              return oldest == null ? null : Duration.between(oldest, now);
            })
        .stream()
        .filter(Objects::nonNull)
        .findFirst();
  }

  @Override
  public Map<String, DestinationBacklog> backlogByDestination() {
    Map<String, DestinationBacklog> backlog = new TreeMap<>();
    query(
        "backlog by destination",
        admin.backlogByDestinationSql(),
        ps -> {},
        rs -> {
          Instant oldest = rows.instant(rs, 3);
          Instant now = rows.instant(rs, 4);
          Duration age = oldest == null ? Duration.ZERO : Duration.between(oldest, now);
          backlog.put(rs.getString(1), new DestinationBacklog(rs.getLong(2), age));
          return null;
        });
    return backlog;
  }

  @Override
  public Instant databaseNow() {
    return query("database now", admin.databaseNowSql(), ps -> {}, rs -> rows.instant(rs, 1))
        .get(0);
  }

  @Override
  public Optional<StoredJob> findJob(long id) {
    return query("read of message " + id, admin.findJobSql(), ps -> ps.setLong(1, id), rows::stored)
        .stream()
        .findFirst();
  }

  @Override
  public Optional<StoredJob> findByOperationId(String operationId) {
    return query(
            "read of operation_id '" + operationId + "'",
            admin.findByOperationIdSql(),
            ps -> ps.setString(1, operationId),
            rows::stored)
        .stream()
        .findFirst();
  }

  @Override
  public List<StoredAttempt> attempts(long messageId) {
    return query(
        "attempts of message " + messageId,
        admin.attemptsSql(),
        ps -> ps.setLong(1, messageId),
        rs ->
            new StoredAttempt(
                rs.getLong(1),
                rs.getInt(2),
                dialect.binding().readUuid(rs, 3),
                instant(rs, 4),
                instant(rs, 5),
                AttemptOutcome.valueOf(rs.getString(6)),
                rs.getString(7),
                rs.getString(8),
                rs.getString(9),
                rs.getString(10)));
  }

  // ---- operator actions and inspection (admin API) -------------------------------------------

  @Override
  public List<JobSummary> listJobs(JobQuery q) {
    BoundSql sql =
        admin.listJobs(
            new Listing(
                q.state(),
                q.destination(),
                q.orderingKey(),
                q.errorClass(),
                q.operationIdContains(),
                q.from(),
                q.to(),
                q.afterId(),
                q.limit()));
    return query(
        "listing of " + q,
        sql.sql(),
        params(sql),
        rs ->
            new JobSummary(
                rs.getLong(1),
                rs.getString(2),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                rs.getString(6).charAt(0),
                rs.getInt(7),
                rs.getString(8),
                rs.getString(9),
                instant(rs, 10),
                instant(rs, 11),
                instant(rs, 12),
                instant(rs, 13),
                instant(rs, 14),
                instant(rs, 15),
                instant(rs, 16)));
  }

  @Override
  public boolean replayDead(long id) {
    return update("replay of message " + id, admin.replayDeadSql(), ps -> ps.setLong(1, id)) == 1;
  }

  @Override
  public boolean cancelReady(long id, String reason) {
    String error = truncate(reason, MAX_TEXT);
    try {
      return retryingConflicts(
          () -> {
            try (Connection conn = dataSource.getConnection()) {
              return JdbcTransactions.inTransaction(
                  conn,
                  c -> {
                    try (PreparedStatement ps = c.prepareStatement(admin.cancelReadySql())) {
                      ps.setString(1, error);
                      ps.setLong(2, id);
                      if (ps.executeUpdate() != 1) {
                        return false;
                      }
                    }
                    try (PreparedStatement ps =
                        c.prepareStatement(admin.insertCancelAttemptSql())) {
                      ps.setString(1, error);
                      ps.setLong(2, id);
                      ps.executeUpdate();
                    }
                    Optional<StoredJob> cancelled =
                        rows.queryOne(c, admin.findJobSql(), ps -> ps.setLong(1, id));
                    if (cancelled.isPresent() && cancelled.get().orderingKey() != null) {
                      keyHeads.promoteHeads(c, List.of(cancelled.get().orderingKey()));
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
    BoundSql sql =
        admin.countDead(f.destination(), f.errorClass(), f.deadFrom(), f.deadTo(), f.orderingKey());
    return query("count of dead jobs matching " + f, sql.sql(), params(sql), rs -> rs.getLong(1))
        .get(0);
  }

  @Override
  public int replayDead(DeadJobFilter f, int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive, was " + limit);
    }
    BoundSql sql =
        admin.replayDead(
            f.destination(), f.errorClass(), f.deadFrom(), f.deadTo(), f.orderingKey(), limit);
    return update("replay of dead jobs matching " + f, sql.sql(), params(sql));
  }

  @Override
  public Map<String, Map<Character, Long>> countByDestinationAndState() {
    Map<String, Map<Character, Long>> counts = new TreeMap<>();
    query(
        "count by destination and state",
        admin.countByDestinationAndStateSql(),
        ps -> {},
        rs -> {
          counts
              .computeIfAbsent(
                  rs.getString(1),
                  d -> {
                    Map<Character, Long> zero = new LinkedHashMap<>();
                    for (JobState s : JobState.values()) {
                      zero.put(s.code(), 0L);
                    }
                    return zero;
                  })
              .put(rs.getString(2).charAt(0), rs.getLong(3));
          return null;
        });
    return counts;
  }

  @Override
  public List<DeadJobCount> countDeadByErrorClass() {
    return query(
        "count of dead jobs by error class",
        admin.countDeadByErrorClassSql(),
        ps -> {},
        rs -> new DeadJobCount(rs.getString(1), rs.getLong(2)));
  }

  @Override
  public List<DeadOrderingKey> deadOrderingKeys(int limit) {
    return query(
        "ordering keys with dead jobs",
        admin.deadOrderingKeysSql(),
        ps -> ps.setInt(1, limit),
        rs -> new DeadOrderingKey(rs.getString(1), rs.getLong(2), rs.getLong(3)));
  }

  // ---- helpers -------------------------------------------------------------------------------

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

  /** Binds a dialect's statement's parameters (its {@code TypeBinding}). */
  private Binder params(BoundSql sql) {
    return ps -> dialect.binding().bindAll(ps, sql.params());
  }

  private Instant instant(ResultSet rs, int column) throws SQLException {
    return rows.instant(rs, column);
  }
}
