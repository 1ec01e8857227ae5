package dev.outboxrelay.outbox.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** Runs several statements as one short transaction on a connection the caller owns. */
public final class JdbcTransactions {
  private JdbcTransactions() {}

  /** Work done inside the transaction. */
  @FunctionalInterface
  public interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Commits when {@code work} returns, rolls back when it throws, and restores the connection's
   * auto-commit mode either way.
   */
  public static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(false);
    try {
      T result = work.run(c);
      c.commit();
      return result;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }
}
