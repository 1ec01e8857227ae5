package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.jdbc.Columns.MAX_TEXT;
import static dev.outboxrelay.outbox.jdbc.Columns.truncate;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.ConflictRetry;
import dev.outboxrelay.outbox.jdbc.JdbcStatements;
import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.JdbcTransactions;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.store.dialect.ReconciliationStatements;
import dev.outboxrelay.outbox.store.dialect.TypeBinding;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * {@link ReconciliationStore} over JDBC. Statements come from the dialect's {@link
 * ReconciliationStatements}, rendered for the outbox's names when the store is made; this class
 * binds parameters, runs short transactions and maps rows. A write the database rolled back as a
 * deadlock victim runs again ({@link ConflictRetry}), as the outbox store's do. SQL errors become
 * {@link OutboxStoreException} naming the operation. The fleet lock the reconciliation runs under
 * is {@link JdbcFleetLock}.
 */
public class JdbcReconciliationStore implements ReconciliationStore {
  private final DataSource dataSource;
  private final Dialect dialect;

  /** Binds and reads times for the same database. */
  private final TypeBinding binding;

  private final ReconciliationStatements statements;

  /** The reconciliation of the default outbox on {@code dialect}'s database. */
  public JdbcReconciliationStore(DataSource dataSource, Dialect dialect) {
    this(dataSource, dialect, OutboxTables.DEFAULT);
  }

  /**
   * The same for the outbox named by {@code tables}: its statements are rendered for those names.
   */
  public JdbcReconciliationStore(DataSource dataSource, Dialect dialect, OutboxTables tables) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.binding = dialect.binding();
    this.statements = dialect.reconciliation(Objects.requireNonNull(tables, "tables"));
  }

  /** Detects the dialect from one connection of {@code dataSource}. */
  public static JdbcReconciliationStore create(DataSource dataSource) {
    return create(dataSource, OutboxTables.DEFAULT);
  }

  /**
   * Detects the dialect from one connection of {@code dataSource}; the outbox named by {@code
   * tables}.
   */
  public static JdbcReconciliationStore create(DataSource dataSource, OutboxTables tables) {
    return new JdbcReconciliationStore(dataSource, Dialects.detect(dataSource), tables);
  }

  public Dialect dialect() {
    return dialect;
  }

  /** This store's statements, rendered for its outbox's names. */
  public ReconciliationStatements statements() {
    return statements;
  }

  // ---- confirmations -------------------------------------------------------------------------

  @Override
  public int upsertConfirmations(List<Confirmation> confirmations) {
    if (confirmations.isEmpty()) {
      return 0;
    }
    try {
      return retryingConflicts(() -> upsertOnce(confirmations));
    } catch (SQLException e) {
      throw new OutboxStoreException(
          "upsert of " + confirmations.size() + " confirmation(s) failed", e);
    }
  }

  private int upsertOnce(List<Confirmation> confirmations) throws SQLException {
    try (Connection conn = dataSource.getConnection()) {
      return JdbcTransactions.inTransaction(
          conn,
          c -> {
            try (PreparedStatement ps = c.prepareStatement(statements.upsertConfirmationSql())) {
              for (Confirmation k : confirmations) {
                ps.setString(1, k.operationId());
                ps.setString(2, k.destination());
                binding.bindInstant(ps, 3, k.confirmedAt());
                ps.setInt(4, k.appliedCount());
                ps.setString(5, truncate(k.source(), 200));
                ps.addBatch();
              }
              ps.executeBatch();
            }
            return confirmations.size();
          });
    }
  }

  // ---- classification and conditional moves -------------------------------------------------

  @Override
  public List<WindowEntry> classifyWindow(
      String destination, Instant start, Instant end, Duration gracePeriod) {
    String what =
        "classification of destination '" + destination + "' in [" + start + ", " + end + ")";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(statements.classifyWindowSql())) {
      ps.setLong(1, -gracePeriod.toMillis());
      ps.setString(2, destination);
      binding.bindInstant(ps, 3, start);
      binding.bindInstant(ps, 4, end);
      ps.setString(5, destination);
      binding.bindInstant(ps, 6, start);
      binding.bindInstant(ps, 7, end);
      return Rows.list(
          ps,
          rs -> {
            long id = rs.getLong(1);
            Long messageId = rs.wasNull() ? null : id;
            String state = rs.getString(4);
            int attempts = rs.getInt(7);
            Integer attemptsOrNull = rs.wasNull() ? null : attempts;
            return new WindowEntry(
                messageId,
                rs.getString(2),
                rs.getString(3),
                state == null ? null : state.charAt(0),
                instant(rs, 5),
                rs.getString(6),
                attemptsOrNull,
                rs.getInt(8),
                instant(rs, 9),
                ReconciliationCategory.fromWireName(rs.getString(10).trim()));
          });
    } catch (SQLException e) {
      throw new OutboxStoreException(what + " failed", e);
    }
  }

  @Override
  public boolean confirmSent(WindowEntry e) {
    requireJob(e, "confirm");
    return update(
            "confirmation of message " + e.messageId(),
            statements.confirmSentSql(),
            ps -> {
              binding.bindInstant(ps, 1, e.confirmedAt());
              ps.setLong(2, e.messageId());
              ps.setInt(3, e.attempts());
            })
        == 1;
  }

  @Override
  public boolean redrive(WindowEntry e, String reason) {
    requireJob(e, "re-drive");
    return update(
            "re-drive of message " + e.messageId(),
            statements.redriveSql(),
            ps -> {
              ps.setString(1, truncate(reason, MAX_TEXT));
              ps.setLong(2, e.messageId());
              ps.setInt(3, e.attempts());
            })
        == 1;
  }

  @Override
  public boolean acceptConfirmed(WindowEntry e) {
    requireJob(e, "accept");
    if (e.confirmedAt() == null) {
      throw new IllegalStateException(
          "message " + e.messageId() + " has no confirmation to accept");
    }
    return update(
            "acceptance of message " + e.messageId(),
            statements.acceptConfirmedSql(),
            ps -> {
              binding.bindInstant(ps, 1, e.confirmedAt());
              binding.bindInstant(ps, 2, e.confirmedAt());
              ps.setLong(3, e.messageId());
              ps.setString(4, String.valueOf(e.state()));
              ps.setInt(5, e.attempts());
            })
        == 1;
  }

  private static void requireJob(WindowEntry e, String move) {
    if (!e.knownJob()) {
      throw new IllegalStateException(
          "cannot "
              + move
              + " operation '"
              + e.operationId()
              + "': no job of destination '"
              + e.destination()
              + "' holds it");
    }
  }

  // ---- runs ----------------------------------------------------------------------------------

  @Override
  public Optional<Long> startRun(RunStart s) {
    try {
      return Optional.of(retryingConflicts(() -> insertRun(s)));
    } catch (SQLException e) {
      if (s.scheduleSlot() != null && dialect.errors().isUniqueViolation(e)) {
        return Optional.empty(); // another relay reconciled this slot first
      }
      throw new OutboxStoreException(
          "start of a reconciliation run for ["
              + s.windowStart()
              + ", "
              + s.windowEnd()
              + ") failed",
          e);
    }
  }

  private long insertRun(RunStart s) throws SQLException {
    try (Connection c = JdbcStatements.autoCommitConnection(dataSource);
        PreparedStatement ps = c.prepareStatement(statements.insertRunSql(), new String[] {"id"})) {
      binding.bindInstant(ps, 1, s.windowStart());
      binding.bindInstant(ps, 2, s.windowEnd());
      ps.setString(3, s.triggeredBy());
      ps.setString(4, truncate(s.owner(), 200));
      binding.bindInstant(ps, 5, s.scheduleSlot());
      ps.executeUpdate();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        if (!keys.next()) {
          throw new IllegalStateException("the run insert returned no id");
        }
        return keys.getLong(1);
      }
    }
  }

  @Override
  public boolean scheduleSlotTaken(Instant slot) {
    return query(
                "schedule slot " + slot,
                statements.countRunsInSlotSql(),
                ps -> binding.bindInstant(ps, 1, slot),
                rs -> rs.getLong(1))
            .get(0)
        > 0;
  }

  @Override
  public boolean finishRun(
      long runId,
      Map<ReconciliationCategory, Integer> counts,
      int pending,
      List<ReconciliationItem> items,
      String error) {
    try {
      return retryingConflicts(() -> finishOnce(runId, counts, pending, items, error));
    } catch (SQLException e) {
      throw new OutboxStoreException("finish of reconciliation run " + runId + " failed", e);
    }
  }

  private boolean finishOnce(
      long runId,
      Map<ReconciliationCategory, Integer> counts,
      int pending,
      List<ReconciliationItem> items,
      String error)
      throws SQLException {
    try (Connection conn = dataSource.getConnection()) {
      return JdbcTransactions.inTransaction(
          conn,
          c -> {
            try (PreparedStatement ps = c.prepareStatement(statements.finishRunSql())) {
              int i = 1;
              for (ReconciliationCategory category : ReconciliationCategory.REPORTED) {
                Integer n = counts.get(category);
                if (n == null) {
                  ps.setNull(i++, Types.INTEGER);
                } else {
                  ps.setInt(i++, n);
                }
              }
              ps.setInt(i++, pending);
              ps.setString(i++, truncate(error, MAX_TEXT));
              ps.setLong(i, runId);
              if (ps.executeUpdate() != 1) {
                return false;
              }
            }
            try (PreparedStatement ps = c.prepareStatement(statements.insertItemSql())) {
              for (ReconciliationItem item : items) {
                ps.setLong(1, runId);
                ps.setString(2, item.operationId());
                if (item.messageId() == null) {
                  ps.setNull(3, Types.BIGINT);
                } else {
                  ps.setLong(3, item.messageId());
                }
                ps.setString(4, item.destination());
                ps.setString(5, item.state() == null ? null : String.valueOf(item.state()));
                ps.setString(6, item.category().wireName());
                binding.bindInstant(ps, 7, item.sentAt());
                ps.setInt(8, item.confirmedCount());
                ps.setString(9, truncate(item.lastError(), MAX_TEXT));
                ps.setString(10, item.action());
                ps.addBatch();
              }
              if (!items.isEmpty()) {
                ps.executeBatch();
              }
            }
            return true;
          });
    }
  }

  @Override
  public Optional<ReconciliationRun> findRun(long runId) {
    return query(
            "read of reconciliation run " + runId,
            statements.findRunSql(),
            ps -> ps.setLong(1, runId),
            this::run)
        .stream()
        .findFirst()
        .map(r -> r.withItems(items(r.id())));
  }

  @Override
  public Optional<ReconciliationRun> latestFinishedRun() {
    return query(
            "read of the latest reconciliation run",
            statements.latestFinishedRunSql(),
            ps -> {},
            this::run)
        .stream()
        .findFirst()
        .map(r -> r.withItems(items(r.id())));
  }

  @Override
  public List<ReconciliationRun> recentRuns(int limit) {
    return query(
        "read of the latest " + limit + " reconciliation runs",
        statements.recentRunsSql(),
        ps -> ps.setInt(1, limit),
        this::run);
  }

  @Override
  public Optional<Map.Entry<ReconciliationRun, Duration>> latestSuccessfulRun() {
    return query(
            "read of the latest successful reconciliation run",
            statements.latestSuccessfulRunSql(),
            ps -> {},
            rs -> {
              ReconciliationRun run = run(rs);
              Instant now = instant(rs, 16);
              return Map.entry(run, Duration.between(run.finishedAt(), now));
            })
        .stream()
        .findFirst();
  }

  private List<ReconciliationItem> items(long runId) {
    return query(
        "items of reconciliation run " + runId,
        statements.itemsSql(),
        ps -> ps.setLong(1, runId),
        rs -> {
          long id = rs.getLong(2);
          Long messageId = rs.wasNull() ? null : id;
          String state = rs.getString(4);
          return new ReconciliationItem(
              rs.getString(1),
              messageId,
              rs.getString(3),
              state == null ? null : state.charAt(0),
              ReconciliationCategory.fromWireName(rs.getString(5)),
              instant(rs, 6),
              rs.getInt(7),
              rs.getString(8),
              rs.getString(9));
        });
  }

  private ReconciliationRun run(ResultSet rs) throws SQLException {
    Map<ReconciliationCategory, Integer> counts = new EnumMap<>(ReconciliationCategory.class);
    int column = 9;
    for (ReconciliationCategory category : ReconciliationCategory.REPORTED) {
      int n = rs.getInt(column++);
      if (!rs.wasNull()) {
        counts.put(category, n);
      }
    }
    int pending = rs.getInt(14);
    return new ReconciliationRun(
        rs.getLong(1),
        instant(rs, 2),
        instant(rs, 3),
        instant(rs, 4),
        instant(rs, 5),
        rs.getString(6),
        rs.getString(7),
        instant(rs, 8),
        counts,
        pending,
        rs.getString(15),
        List.of());
  }

  // ---- clock ---------------------------------------------------------------------------------

  @Override
  public Instant databaseNow() {
    return query("database now", statements.databaseNowSql(), ps -> {}, rs -> instant(rs, 1))
        .get(0);
  }

  // ---- helpers -------------------------------------------------------------------------------

  /**
   * Runs {@code work} again while the database rolls it back as a deadlock victim ({@link
   * ConflictRetry}).
   */
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

  private Instant instant(ResultSet rs, int column) throws SQLException {
    return binding.readInstant(rs, column);
  }
}
