package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.store.dialect.ReadyNotifications;
import dev.outboxrelay.relay.background.BackgroundService;
import dev.outboxrelay.relay.background.Pass;
import dev.outboxrelay.relay.background.ServiceRunner;
import dev.outboxrelay.relay.state.StateChangeLog;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Wakes the claim loop when the database announces committed jobs (PostgreSQL LISTEN/NOTIFY, see
 * {@link ReadyNotifications}). Holds one connection of its own for as long as it listens, waiting
 * in {@link PGConnection#getNotifications(int)}; a notification for this outbox's schema runs
 * {@code onReady} (the claim loop's {@link ClaimLoop#wake()}).
 *
 * <p>Only a shortcut: the claim loop keeps polling on its idle schedule, so a lost notification
 * costs latency, never a job. When the connection breaks (database restart, terminated backend,
 * network), the pass fails and its {@link ServiceRunner} reports it (once per state change) and
 * reconnects with a growing pause; each (re)connect wakes the loop once, since notifications sent
 * meanwhile were lost.
 */
public final class ReadyListener implements BackgroundService, AutoCloseable {
  private static final Logger LOG = Logger.getLogger(ReadyListener.class);

  /** The listening connection's {@code application_name} (pg_stat_activity). */
  public static final String APPLICATION_NAME = "outbox-relay-listener";

  /** Longest wait inside getNotifications: how long {@link #close} may take to be noticed. */
  static final int WAIT_MILLIS = 500;

  /** A quiet connection is checked this often, so a silently dropped one is noticed. */
  static final Duration CHECK_INTERVAL = Duration.ofSeconds(10);

  static final Duration RECONNECT_MIN = Duration.ofMillis(100);
  static final int RECONNECT_MAX_SECONDS = 10;
  static final Duration RECONNECT_MAX = Duration.ofSeconds(RECONNECT_MAX_SECONDS);

  /** Opens the connection to listen on (a pooled one is given back, unsubscribed, at close). */
  @FunctionalInterface
  public interface ConnectionSource {
    Connection open() throws SQLException;
  }

  private final ConnectionSource source;
  private final ReadyNotifications notifications;
  private final Runnable onReady;
  private final String applicationName;
  private final AtomicReference<String> state = new AtomicReference<>("starting");
  private volatile boolean listening;
  private ServiceRunner runner;

  public ReadyListener(
      ConnectionSource source, ReadyNotifications notifications, Runnable onReady) {
    this(source, notifications, onReady, APPLICATION_NAME);
  }

  public ReadyListener(
      ConnectionSource source,
      ReadyNotifications notifications,
      Runnable onReady,
      String applicationName) {
    this.source = source;
    this.notifications = notifications;
    this.onReady = onReady;
    this.applicationName = applicationName;
    reportingTo(StateChangeLog.logging("the notification listener's database", LOG));
  }

  /**
   * Reports connection failures to {@code database} (its source's state, logged once per change);
   * call before {@link #start()}.
   */
  public ReadyListener reportingTo(StateChangeLog database) {
    this.runner =
        new ServiceRunner(
                "outbox-ready-listener", "listening for notifications failed", this, database)
            .every(Duration.ZERO)
            .firstAfter(Duration.ZERO)
            .backingOffTo(RECONNECT_MAX);
    return this;
  }

  public synchronized void start() {
    listening = true;
    runner.start();
  }

  /**
   * {@code listening}, {@code starting}, {@code stopped}, or {@code reconnecting: <error>} while
   * the connection is down (the claim loop polls meanwhile).
   */
  public String state() {
    return state.get();
  }

  public boolean listening() {
    return "listening".equals(state.get());
  }

  /**
   * One pass: opens a connection and listens on it until {@link #close()} (its work: the
   * notifications that woke the claim loop) or until the connection fails (throws; the runner
   * reconnects after a pause growing from 100ms to {@value #RECONNECT_MAX_SECONDS}s).
   */
  @Override
  public Pass runOnce() throws SQLException {
    Connection c = null;
    try {
      c = source.open();
      long wakeups = listen(c);
      release(c);
      return Pass.done(wakeups);
    } catch (SQLException | RuntimeException e) {
      abort(c);
      if (!listening) {
        return Pass.idle();
      }
      state.set("reconnecting: " + e.getMessage());
      throw e;
    }
  }

  /**
   * Listens on {@code c} until {@link #close()} (returns the wake-ups) or the connection fails
   * (throws).
   */
  private long listen(Connection c) throws SQLException {
    try {
      c.setClientInfo("ApplicationName", applicationName);
    } catch (SQLClientInfoException e) {
      LOG.debugf("cannot set the listener's application name: %s", e.getMessage());
    }
    c.setAutoCommit(true);
    String schema;
    try (Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery(notifications.currentSchemaSql())) {
        schema = rs.next() ? rs.getString(1) : null;
      }
      s.execute(notifications.listenSql());
    }
    PGConnection pg = c.unwrap(PGConnection.class);
    state.set("listening");
    LOG.debugf("listening for %s notifications (schema %s)", notifications.channel(), schema);
    // Jobs committed while nobody listened announced themselves to no one: claim once now.
    onReady.run();
    long wakeups = 0;
    long lastCheck = System.nanoTime();
    while (listening) {
      PGNotification[] received = pg.getNotifications(WAIT_MILLIS);
      boolean ours = false;
      if (received != null) {
        for (PGNotification n : received) {
          String payload = n.getParameter();
          ours |= payload == null || payload.isEmpty() || payload.equals(schema);
        }
      }
      if (ours) {
        onReady.run();
        wakeups++;
        lastCheck = System.nanoTime();
      } else if (System.nanoTime() - lastCheck > CHECK_INTERVAL.toNanos()) {
        if (!c.isValid(5)) {
          throw new SQLException("the listening connection is no longer valid");
        }
        lastCheck = System.nanoTime();
      }
    }
    return wakeups;
  }

  /** Gives a healthy connection back without its subscription (it may go back to a pool). */
  private void release(Connection c) {
    try (Statement s = c.createStatement()) {
      s.execute(notifications.unlistenSql());
      try {
        c.setClientInfo("ApplicationName", "");
      } catch (SQLClientInfoException ignored) {
        // only a label
      }
      c.close();
    } catch (SQLException | RuntimeException e) {
      abort(c);
    }
  }

  /** Discards a broken connection (a pool must not hand it out again). */
  private static void abort(Connection c) {
    if (c == null) {
      return;
    }
    try {
      c.abort(Runnable::run);
    } catch (SQLException | RuntimeException e) {
      try {
        c.close();
      } catch (SQLException | RuntimeException ignored) {
        // already gone
      }
    }
  }

  /** Stops listening and gives the connection back; the claim loop keeps its polling. */
  @Override
  public void close() {
    listening = false;
    runner.close();
    state.set("stopped");
  }
}
