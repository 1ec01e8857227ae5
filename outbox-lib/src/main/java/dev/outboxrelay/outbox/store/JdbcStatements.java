package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.store.dialect.OutboxDialect.readAll;

import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;

/** The statement plumbing the JDBC stores share: one statement on a pooled connection. */
final class JdbcStatements {
  private JdbcStatements() {}

  /** Sets a statement's parameters. */
  @FunctionalInterface
  interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** A pooled connection in auto-commit mode: each statement is its own short transaction. */
  static Connection autoCommitConnection(DataSource dataSource) throws SQLException {
    Connection c = dataSource.getConnection();
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true);
    }
    return c;
  }

  /** Runs one update in auto-commit mode; returns the update count. */
  static int executeUpdate(DataSource dataSource, String sql, Binder binder) throws SQLException {
    try (Connection c = autoCommitConnection(dataSource); PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return ps.executeUpdate();
    }
  }

  /**
   * Runs one query and maps every row. The connection is used as it comes: inside a caller's JTA
   * transaction too.
   */
  static <T> List<T> query(DataSource dataSource, String what, String sql, Binder binder,
      OutboxDialect.RowMapper<T> mapper) {
    try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return readAll(ps, mapper);
    } catch (SQLException e) {
      throw new OutboxStoreException(what + " failed", e);
    }
  }
}
