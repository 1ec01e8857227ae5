package dev.outboxrelay.relay.claim;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.store.dialect.PostgresDialect;
import dev.outboxrelay.outbox.store.dialect.ReadyNotifications;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.relay.lease.LeaseHeartbeat;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.HttpSink;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * LISTEN/NOTIFY on real PostgreSQL: with the idle wait at 5 s, a committed job reaches the sink
 * well within it because the V4 trigger's notification wakes the claim loop; with the listening
 * connection terminated (and kept from reconnecting), jobs still arrive by polling, and the
 * listener reconnects and wakes the loop again. Functional checks with wide margins, not timings.
 */
class ReadyListenerIT {
  static final String SCHEMA = "relay_notify";
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration IDLE = Duration.ofSeconds(5);

  /** Far under the 5 s idle wait, far over a notification's way on an idle machine. */
  static final Duration WOKEN_WITHIN = Duration.ofMillis(1500);

  DataSource ds;
  JdbcOutboxStore store;
  JdbcOutboxAdminStore admin;
  Outbox outbox;
  RecordingHttpReceiver receiver;
  RelayMetrics metrics;
  LeaseHeartbeat heartbeat;
  ClaimLoop loop;
  ReadyListener listener;

  /** A per-test application_name, so the test finds its own listener among other sessions. */
  final String applicationName =
      "outbox-relay-listener-it-" + UUID.randomUUID().toString().substring(0, 8);

  /** While true, the listener cannot (re)connect: the database is "unreachable" for it only. */
  final AtomicBoolean listenerCut = new AtomicBoolean();

  /**
   * The loop's thread, named after this test's listener so that no other test's loop is taken for
   * it.
   */
  final String loopThread = "outbox-claim-loop-" + applicationName;

  /** Wake-ups the listener has handed to the loop. */
  final AtomicInteger wakeUps = new AtomicInteger();

  /** The loop's claim statements counted just after the last wake-up was handed to it. */
  final AtomicInteger statementsAtLastWakeUp = new AtomicInteger();

  @BeforeEach
  void setUp() throws Exception {
    ds = TestDatabases.postgres(SCHEMA);
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DELETE FROM outbox_message");
    }
    store = new JdbcOutboxStore(ds, new PostgresDialect());
    admin = new JdbcOutboxAdminStore(ds, new PostgresDialect());
    outbox = new Outbox(OutboxConfig.builder().destinations("billing").build());
    receiver = new RecordingHttpReceiver();
    SinkRegistry sinks =
        new SinkRegistry(
            Map.of(
                "billing",
                new HttpSink(receiver.url("/b"), Duration.ofSeconds(1), Duration.ofSeconds(30))));
    metrics = new RelayMetrics(new SimpleMeterRegistry());
    heartbeat = new LeaseHeartbeat(store, LEASE, null, c -> metrics.staleCompletion("renew"));
    Deliverer d =
        new Deliverer(
            store,
            sinks,
            new Backoff(Duration.ofMillis(10), 2, Duration.ofMillis(100), 0, Math::random),
            metrics,
            5,
            LEASE,
            () -> Duration.ZERO);
    // The idle wait at its maximum all the time: without a wake-up a job waits up to 5 s.
    loop =
        new ClaimLoop(store, d, heartbeat, 8, 8, LEASE, new IdleWait(IDLE, IDLE))
            .namedAfter(applicationName);
    listener =
        new ReadyListener(
            () -> {
              if (listenerCut.get()) {
                throw new SQLException("test: the listener's database is unreachable");
              }
              return ds.getConnection();
            },
            new PostgresDialect().readyNotifications().orElseThrow(),
            () -> {
              metrics.claimWakeup();
              loop.wake();
              statementsAtLastWakeUp.set(loop.claimStatements());
              wakeUps.incrementAndGet();
            },
            applicationName);
  }

  @AfterEach
  void tearDown() {
    if (listener != null) {
      listener.close();
    }
    if (loop != null) {
      loop.stop(Duration.ofMillis(500));
    }
    if (heartbeat != null) {
      heartbeat.close();
    }
    receiver.close();
  }

  @Test
  void theDialectListensOnTheChannelTheMigrationNotifies() {
    ReadyNotifications n = new PostgresDialect().readyNotifications().orElseThrow();
    assertEquals("outbox_ready", n.channel());
    assertTrue(n.listenSql().endsWith(n.channel()), n.listenSql());
  }

  @Test
  void aCommittedJobWakesTheIdleLoop() throws Exception {
    startAndSettle();
    for (int round = 0; round < 3; round++) {
      awaitIdle(wakeUps.get());
      double wakeupsBefore = metrics.claimWakeupCount();
      String op = enqueue();
      // Polling alone would take up to 5 s; the notification makes it well under that.
      await("round " + round + ": the job sent after the notification's wake-up")
          .atMost(WOKEN_WITHIN)
          .pollInterval(Duration.ofMillis(20))
          .until(() -> sent(op));
      assertTrue(
          metrics.claimWakeupCount() > wakeupsBefore, "round " + round + ": no wake-up counted");
    }
    assertEquals(3, receiver.requests().size());
  }

  @Test
  void aKilledListenerCostsLatencyOnlyAndReconnects() throws Exception {
    startAndSettle();
    int firstPid = listenerPid();
    listenerCut.set(true);
    terminate(firstPid);
    await().atMost(Duration.ofSeconds(10)).until(() -> listener.state().startsWith("reconnecting"));

    // Nobody listens: the loop's polling still delivers, within its idle wait (plus a margin).
    List<String> ops = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ops.add(enqueue());
    }
    await()
        .atMost(IDLE.multipliedBy(3))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> ops.stream().allMatch(this::sent));
    assertTrue(listener.state().startsWith("reconnecting"), listener.state());

    // The database is reachable again: the listener reconnects on its own, on a new backend ...
    int wakeUpsWhileCut = wakeUps.get();
    listenerCut.set(false);
    await().atMost(Duration.ofSeconds(20)).until(listener::listening);
    int secondPid = listenerPid();
    assertTrue(secondPid != firstPid, "the same backend " + firstPid + " after termination");
    // ... and wakes the loop again, once its reconnect's own wake-up has been spent.
    awaitIdle(wakeUpsWhileCut + 1);
    double wakeupsBefore = metrics.claimWakeupCount();
    String op = enqueue();
    await().atMost(WOKEN_WITHIN).pollInterval(Duration.ofMillis(20)).until(() -> sent(op));
    assertTrue(
        metrics.claimWakeupCount() > wakeupsBefore, "no wake-up counted after the reconnect");
    assertEquals(4, receiver.requests().size());
  }

  /** Starts loop and listener, waits until the listener listens and its first wake-up was spent. */
  private void startAndSettle() {
    loop.start();
    listener.start();
    await().atMost(Duration.ofSeconds(10)).until(listener::listening);
    awaitIdle(1);
  }

  /**
   * Waits until the loop has been handed {@code wakeUpsHanded} wake-ups, has claimed after the last
   * of them, and is parked in its idle wait: a job committed now reaches the sink within {@link
   * #WOKEN_WITHIN} only through a new wake-up, not through a claim already under way.
   */
  private void awaitIdle(int wakeUpsHanded) {
    await("the loop idle after " + wakeUpsHanded + " wake-up(s)")
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                wakeUps.get() >= wakeUpsHanded
                    && loop.claimStatements() > statementsAtLastWakeUp.get()
                    && parkedInIdleWait());
  }

  /**
   * The loop's thread waits inside {@link IdleWait#await}, which parks only with no wake-up
   * pending.
   */
  private boolean parkedInIdleWait() {
    return Thread.getAllStackTraces().entrySet().stream()
        .filter(e -> e.getKey().getName().equals(loopThread))
        .anyMatch(
            e ->
                e.getKey().getState() == Thread.State.TIMED_WAITING
                    && Arrays.stream(e.getValue())
                        .anyMatch(
                            f ->
                                f.getClassName().equals(IdleWait.class.getName())
                                    && f.getMethodName().equals("await")));
  }

  private String enqueue() throws SQLException {
    String op = "op-" + UUID.randomUUID();
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder()
              .operationId(op)
              .destination("billing")
              .payload("{\"op\":\"" + op + "\"}")
              .build());
    }
    return op;
  }

  private boolean sent(String op) {
    return admin.findByOperationId(op).map(StoredJob::state).orElse('?') == 'S';
  }

  private int listenerPid() throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT pid FROM pg_stat_activity WHERE application_name = ? AND datname = current_database()")) {
      ps.setString(1, applicationName);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next(), "no session with application_name " + applicationName);
        int pid = rs.getInt(1);
        assertTrue(!rs.next(), "more than one listener session");
        return pid;
      }
    }
  }

  private void terminate(int pid) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next() && rs.getBoolean(1), "pg_terminate_backend(" + pid + ")");
      }
    }
  }
}
