package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.store.dialect.ReadyNotifications;
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
 * network), the listener logs once per state change, reconnects with a growing pause, and wakes
 * the loop once after each (re)connect, since notifications sent meanwhile were lost.
 */
public final class ReadyListener implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(ReadyListener.class);
  /** The listening connection's {@code application_name} (pg_stat_activity). */
  public static final String APPLICATION_NAME = "outbox-relay-listener";
  /** Longest wait inside getNotifications: how long {@link #close} may take to be noticed. */
  static final int WAIT_MILLIS = 500;
  /** A quiet connection is checked this often, so a silently dropped one is noticed. */
  static final Duration CHECK_INTERVAL = Duration.ofSeconds(10);
  static final Duration RECONNECT_MIN = Duration.ofMillis(100);
  static final Duration RECONNECT_MAX = Duration.ofSeconds(10);

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
  private volatile boolean running;
  private Thread thread;
  /** Where connection errors go; null: logged here, once per state change. */
  private volatile dev.outboxrelay.relay.health.StateChangeLog database;

  public ReadyListener(ConnectionSource source, ReadyNotifications notifications, Runnable onReady) {
    this(source, notifications, onReady, APPLICATION_NAME);
  }

  public ReadyListener(ConnectionSource source, ReadyNotifications notifications, Runnable onReady,
      String applicationName) {
    this.source = source;
    this.notifications = notifications;
    this.onReady = onReady;
    this.applicationName = applicationName;
  }

  /**
   * Reports connection failures to {@code database} (its source's state, logged once per change)
   * instead of logging them here; call before {@link #start()}.
   */
  public ReadyListener reportingTo(dev.outboxrelay.relay.health.StateChangeLog database) {
    this.database = database;
    return this;
  }

  public synchronized void start() {
    if (running) {
      return;
    }
    running = true;
    thread = new Thread(this::run, "outbox-ready-listener");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * {@code listening}, {@code starting}, {@code stopped}, or {@code reconnecting: <error>} while the
   * connection is down (the claim loop polls meanwhile).
   */
  public String state() {
    return state.get();
  }

  public boolean listening() {
    return "listening".equals(state.get());
  }

  private void run() {
    Duration pause = RECONNECT_MIN;
    while (running) {
      Connection c = null;
      try {
        c = source.open();
        listen(c, pause);
        pause = RECONNECT_MIN;
      } catch (SQLException | RuntimeException e) {
        if (!running) {
          break;
        }
        String error = String.valueOf(e.getMessage());
        String previous = state.getAndSet("reconnecting: " + error);
        if (database != null) {
          database.failure("listening for notifications failed: " + error);
        } else if (!previous.startsWith("reconnecting")) {
          LOG.warnf("listening for %s notifications failed (%s); the claim loop polls meanwhile;"
              + " reconnecting with growing pauses (logged again when it works)", notifications.channel(), error);
        }
        abort(c);
        c = null;
        try {
          Thread.sleep(pause.toMillis());
        } catch (InterruptedException ie) {
          break;
        }
        pause = Backoff.doubled(pause, RECONNECT_MAX);
      } finally {
        if (c != null) {
          release(c);
        }
      }
    }
    state.set("stopped");
  }

  /** Listens on {@code c} until {@link #close()} (returns) or the connection fails (throws). */
  private void listen(Connection c, Duration pauseBefore) throws SQLException {
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
    String previous = state.getAndSet("listening");
    if (previous.startsWith("reconnecting") && database == null) {
      LOG.infof("listening for %s notifications again", notifications.channel());
    } else {
      LOG.debugf("listening for %s notifications (schema %s)", notifications.channel(), schema);
    }
    // Jobs committed while nobody listened announced themselves to no one: claim once now.
    onReady.run();
    long lastCheck = System.nanoTime();
    while (running) {
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
        lastCheck = System.nanoTime();
      } else if (System.nanoTime() - lastCheck > CHECK_INTERVAL.toNanos()) {
        if (!c.isValid(5)) {
          throw new SQLException("the listening connection is no longer valid");
        }
        lastCheck = System.nanoTime();
      }
    }
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
    Thread t;
    synchronized (this) {
      running = false;
      t = thread;
    }
    if (t == null) {
      state.set("stopped");
      return;
    }
    try {
      t.join(WAIT_MILLIS * 4L);
      if (t.isAlive()) {
        t.interrupt();
        t.join(2_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
