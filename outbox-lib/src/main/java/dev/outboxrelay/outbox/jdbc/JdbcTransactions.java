package dev.outboxrelay.outbox.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.OptionalInt;

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
    return inTransaction(c, OptionalInt.empty(), work);
  }

  /**
   * {@link #inTransaction(Connection, Work)} at {@code isolation} when set (a {@link Connection}
   * {@code TRANSACTION_*} level), the connection's own level restored afterwards.
   */
  public static <T> T inTransaction(Connection c, OptionalInt isolation, Work<T> work)
      throws SQLException {
    return atIsolation(c, isolation, tx -> inTransactionAsIs(tx, work));
  }

  /**
   * Runs {@code work} on {@code c} at {@code isolation} when set, the connection's own level
   * restored afterwards; as the connection is (auto-commit or not) otherwise.
   */
  public static <T> T atIsolation(Connection c, OptionalInt isolation, Work<T> work)
      throws SQLException {
    if (isolation.isEmpty()) {
      return work.run(c);
    }
    int own = c.getTransactionIsolation();
    c.setTransactionIsolation(isolation.getAsInt());
    try {
      return work.run(c);
    } finally {
      c.setTransactionIsolation(own);
    }
  }

  private static <T> T inTransactionAsIs(Connection c, Work<T> work) throws SQLException {
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
