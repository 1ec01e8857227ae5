package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.jdbc.Columns.MAX_TEXT;
import static dev.outboxrelay.outbox.jdbc.Columns.truncate;

import dev.outboxrelay.outbox.JobState;
import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.ConflictRetry;
import dev.outboxrelay.outbox.jdbc.JdbcStatements;
import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import dev.outboxrelay.outbox.schema.OutboxTables;
import dev.outboxrelay.outbox.schema.TableRendering;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
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
import javax.sql.DataSource;

/**
 * {@link OutboxAdminStore} over JDBC: the counts and ages the gauges read, the jobs and attempts
 * an operator inspects, and the operator's replay and cancel. Statements come from the {@link
 * OutboxDialect}; SQL errors become {@link OutboxStoreException} naming the operation.
 */
public class JdbcOutboxAdminStore implements OutboxAdminStore {
  private final DataSource dataSource;
  private final OutboxDialect dialect;
  private final KeyHeads keyHeads;
  private final JobRows rows;

  public JdbcOutboxAdminStore(DataSource dataSource, OutboxDialect dialect) {
    this(dataSource, dialect, OutboxTables.DEFAULT);
  }

  /** The outbox named by {@code tables}: every statement is rendered for those names ({@link TableRendering}). */
  public JdbcOutboxAdminStore(DataSource dataSource, OutboxDialect dialect, OutboxTables tables) {
    this.dataSource = TableRendering.dataSource(Objects.requireNonNull(dataSource, "dataSource"),
        Objects.requireNonNull(tables, "tables"));
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.keyHeads = new KeyHeads(dialect);
    this.rows = new JobRows(dialect);
  }

  /** Detects the dialect from one connection of {@code dataSource}. */
  public static JdbcOutboxAdminStore create(DataSource dataSource) {
    return create(dataSource, OutboxTables.DEFAULT);
  }

  /** Detects the dialect from one connection of {@code dataSource}; the outbox named by {@code tables}. */
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
        rows::stored).stream().findFirst();
  }


  @Override
  public Optional<StoredMessage> findByOperationId(String operationId) {
    return query("read of operation_id '" + operationId + "'", dialect.findByOperationIdSql(),
        ps -> ps.setString(1, operationId), rows::stored).stream().findFirst();
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
    return query("listing of " + q, sql.sql(), params(sql), rs -> new MessageSummary(
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
            Optional<StoredMessage> cancelled = rows.queryOne(c, dialect.findMessageSql(), ps -> ps.setLong(1, id));
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
    BoundSql sql = dialect.countDead(f.destination(), f.errorClass(), f.deadFrom(), f.deadTo(),
        f.orderingKey());
    return query("count of dead jobs matching " + f, sql.sql(), params(sql),
        rs -> rs.getLong(1)).get(0);
  }

  @Override
  public int replayDead(DeadJobFilter f, int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive, was " + limit);
    }
    BoundSql sql = dialect.replayDead(f.destination(), f.errorClass(), f.deadFrom(), f.deadTo(),
        f.orderingKey(), limit);
    return update("replay of dead jobs matching " + f, sql.sql(), params(sql));
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

  private <T> T retryingConflicts(ConflictRetry.Work<T> work) throws SQLException {
    return ConflictRetry.run(dialect::isRetryableConflict, work);
  }

  private int update(String what, String sql, Binder binder) {
    return JdbcStatements.update(dataSource, dialect::isRetryableConflict, what, sql, binder);
  }

  private <T> List<T> query(String what, String sql, Binder binder, OutboxDialect.RowMapper<T> mapper) {
    return JdbcStatements.query(dataSource, what, sql, binder, mapper);
  }

  /** Binds a dialect's statement's parameters ({@link Dialects#bindAll}). */
  private Binder params(BoundSql sql) {
    return ps -> Dialects.bindAll(ps, sql.params(), dialect);
  }

  private Instant instant(ResultSet rs, int column) throws SQLException {
    return rows.instant(rs, column);
  }
}
