package dev.outboxrelay.outbox.jdbc;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Predicate;
import javax.sql.DataSource;

/** The statement plumbing the JDBC stores share: one statement on a pooled connection. */
public final class JdbcStatements {
  private JdbcStatements() {}

  /** Sets a statement's parameters. */
  @FunctionalInterface
  public interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** A pooled connection in auto-commit mode: each statement is its own short transaction. */
  public static Connection autoCommitConnection(DataSource dataSource) throws SQLException {
    Connection c = dataSource.getConnection();
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    return c;
  }

  /** Runs one update in auto-commit mode; returns the update count. */
  public static int executeUpdate(DataSource dataSource, String sql, Binder binder)
      throws SQLException {
    try (Connection c = autoCommitConnection(dataSource);
        PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return ps.executeUpdate();
    }
  }

  /**
   * {@link #executeUpdate} run again while the database rolls it back as a conflict ({@link
   * ConflictRetry}); any failure left becomes an {@link OutboxStoreException} saying {@code what}
   * failed.
   */
  public static int update(
      DataSource dataSource,
      Predicate<SQLException> retryable,
      String what,
      String sql,
      Binder binder) {
    try {
      return ConflictRetry.run(retryable, () -> executeUpdate(dataSource, sql, binder));
    } catch (SQLException e) {
      throw new OutboxStoreException(what + " failed", e);
    }
  }

  /**
   * Runs one query and maps every row. The connection is used as it comes: inside a caller's JTA
   * transaction too.
   */
  public static <T> List<T> query(
      DataSource dataSource, String what, String sql, Binder binder, Rows.Mapper<T> mapper) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return Rows.list(ps, mapper);
    } catch (SQLException e) {
      throw new OutboxStoreException(what + " failed", e);
    }
  }
}
