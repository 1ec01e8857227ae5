package dev.outboxrelay.outbox.testing;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A PostgreSQL test data source that keeps its connections open between uses. PostgreSQL forks and
 * warms up a server process for every connection, and the stores open one per call: on a loaded
 * 2-core machine the store contract's cluster test (2,000 jobs, a connection per completion) took
 * 94 s on PostgreSQL against 7 s on MariaDB, the same test. A connection given back is rolled back,
 * set to auto-commit and cleared of its session state ({@code DISCARD ALL}: settings, listeners,
 * advisory locks, temporary tables, prepared statements), so the next test sees what a fresh
 * connection shows; one that no longer answers (a server restarted meanwhile) is replaced. It never
 * makes a caller wait: with none idle, a caller gets a new connection.
 */
final class PooledPostgres implements DataSource {
  /**
   * Connections kept idle at most: what the busiest suite test holds at once (six relays, a reaper,
   * itself).
   */
  private static final int MAX_IDLE = 8;

  private final DataSource target;
  private final Deque<Connection> idle = new ArrayDeque<>();

  PooledPostgres(DataSource target) {
    this.target = target;
  }

  @Override
  public Connection getConnection() throws SQLException {
    while (true) {
      Connection c;
      synchronized (idle) {
        c = idle.pollFirst();
      }
      if (c == null) {
        return lent(target.getConnection());
      }
      if (c.isValid(5)) {
        return lent(c);
      }
      closeQuietly(c);
    }
  }

  /** The connection as the caller sees it: {@code close()} gives it back instead of closing it. */
  private Connection lent(Connection real) {
    AtomicBoolean returned = new AtomicBoolean();
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              switch (method.getName()) {
                case "close" -> {
                  if (returned.compareAndSet(false, true)) {
                    giveBack(real);
                  }
                  return null;
                }
                case "isClosed" -> {
                  return returned.get() || real.isClosed();
                }
                case "equals" -> {
                  return proxy == args[0];
                }
                case "hashCode" -> {
                  return System.identityHashCode(proxy);
                }
                default -> {
                  if (returned.get()) {
                    throw new SQLException("connection already closed");
                  }
                  try {
                    return method.invoke(real, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                }
              }
            });
  }

  private void giveBack(Connection real) {
    try {
      if (real.isClosed()) {
        return;
      }
      if (!real.getAutoCommit()) {
        real.rollback();
        real.setAutoCommit(true);
      }
      if (real.isReadOnly()) {
        real.setReadOnly(false);
      }
      try (Statement s = real.createStatement()) {
        s.execute("DISCARD ALL");
      }
      synchronized (idle) {
        if (idle.size() < MAX_IDLE) {
          idle.addFirst(real);
          return;
        }
      }
      real.close();
    } catch (SQLException e) {
      closeQuietly(real);
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException ignored) {
      // gone already
    }
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("a pooled test data source has one user");
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return target.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    target.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    target.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return target.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return target.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    return iface.isInstance(this) ? iface.cast(this) : target.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || target.isWrapperFor(iface);
  }
}
