package dev.outboxrelay.relay.chaos;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.OptionalLong;
import javax.sql.DataSource;

/**
 * PostgreSQL: a transaction of the test holding one job's row lock, so that a relay statement that
 * must update that row waits in the database (a statement in flight, for as long as the test
 * likes). Closing it rolls back and frees the row.
 */
final class RowLock implements AutoCloseable {
  private final DataSource ds;
  private final Connection holder;
  private final long holderPid;

  private RowLock(DataSource ds, Connection holder, long holderPid) {
    this.ds = ds;
    this.holder = holder;
    this.holderPid = holderPid;
  }

  /** Locks the row of job {@code id} (FOR UPDATE, changing nothing). */
  static RowLock on(DataSource ds, long id) throws SQLException {
    Connection c = ds.getConnection();
    try {
      c.setAutoCommit(false);
      long pid = single(c, "SELECT pg_backend_pid()");
      if (single(c, "SELECT id FROM outbox_message WHERE id = " + id + " FOR UPDATE") != id) {
        throw new IllegalStateException("job " + id + " is not in the table");
      }
      return new RowLock(ds, c, pid);
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /** The backend waiting for this lock, if one does. */
  OptionalLong waiter() {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT pid FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))")) {
      ps.setLong(1, holderPid);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("reading the waiters of backend " + holderPid, e);
    }
  }

  /**
   * Cancels the waiting statement of backend {@code pid}, as a {@code lock_timeout} would: it
   * fails, and its transaction keeps no row lock (PostgreSQL aborts it at once; the client only
   * learns of it when it next reads its connection).
   */
  void cancelWaiter(long pid) {
    try (Connection c = ds.getConnection()) {
      single(c, "SELECT CASE WHEN pg_cancel_backend(" + pid + ") THEN 1 ELSE 0 END");
    } catch (SQLException e) {
      throw new IllegalStateException("cancelling backend " + pid, e);
    }
  }

  private static long single(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? rs.getLong(1) : -1;
    }
  }

  @Override
  public void close() throws SQLException {
    try (holder) {
      holder.rollback();
    }
  }
}
