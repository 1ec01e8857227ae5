package dev.outboxrelay.relay.claim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.StoredAttempt;
import dev.outboxrelay.outbox.store.dialect.H2Dialect;
import dev.outboxrelay.relay.lease.LeaseHeartbeat;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.HttpSink;
import dev.outboxrelay.relay.sink.MessageSink;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.sink.SinkResult;
import dev.outboxrelay.relay.source.PoolSize;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver.Response;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.awaitility.Awaitility;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The claim loop as a service: claimOnce(), back-pressure, idle, errors and shutdown. H2 + real
 * HTTP.
 */
class ClaimLoopTest {
  static final Duration LEASE = Duration.ofSeconds(5);

  RecordingHttpReceiver receiver;
  JdbcOutboxStore store;
  JdbcOutboxAdminStore admin;
  Outbox outbox;
  DataSource ds;
  ClaimLoop loop;
  LeaseHeartbeat heartbeat;

  @BeforeEach
  void setUp() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:claimloop-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    ds = h2;
    OutboxSchema.migrate(ds);
    store = new JdbcOutboxStore(ds, new H2Dialect());
    admin = new JdbcOutboxAdminStore(ds, new H2Dialect());
    outbox = new Outbox(OutboxConfig.builder().destinations("billing").build());
    receiver = new RecordingHttpReceiver();
  }

  @AfterEach
  void tearDown() {
    if (loop != null) {
      loop.stop(Duration.ofMillis(100));
    }
    receiver.close();
  }

  ClaimLoop newLoop(JdbcOutboxStore s, int batch, int concurrency) {
    return newLoop(
        s,
        batch,
        concurrency,
        Map.of(
            "billing",
            new HttpSink(receiver.url("/b"), Duration.ofSeconds(1), Duration.ofSeconds(30))));
  }

  ClaimLoop newLoop(
      JdbcOutboxStore s, int batch, int concurrency, Map<String, MessageSink> destinations) {
    return newLoop(s, batch, concurrency, destinations, LEASE, false);
  }

  /**
   * A loop as the relay wires it when {@code handingOver}: successes completed in batches, whose
   * transaction hands each key's next job to the loop ({@link CompletionBatcher#handingOverTo}).
   */
  ClaimLoop newLoop(
      OutboxStore s,
      int batch,
      int concurrency,
      Map<String, MessageSink> destinations,
      Duration lease,
      boolean handingOver) {
    SinkRegistry sinks = new SinkRegistry(destinations);
    RelayMetrics metrics = new RelayMetrics(new SimpleMeterRegistry());
    heartbeat = new LeaseHeartbeat(s, lease, null, c -> metrics.staleCompletion("renew"));
    Deliverer d =
        new Deliverer(
            s,
            sinks,
            new Backoff(Duration.ofMillis(10), 2, Duration.ofMillis(100), 0, Math::random),
            metrics,
            5,
            lease,
            () -> Duration.ZERO);
    loop =
        new ClaimLoop(
            s,
            d,
            heartbeat,
            batch,
            concurrency,
            lease,
            new IdleWait(Duration.ofMillis(10), Duration.ofMillis(200)));
    if (handingOver) {
      CompletionBatcher completions = new CompletionBatcher(s, batch, Duration.ofMillis(2), lease);
      d.completingInBatches(completions);
      completions.flushWhenAllWaiting(loop::sendingOrRecording).handingOverTo(loop, lease);
    }
    return loop;
  }

  HttpSink http(String path) {
    return new HttpSink(receiver.url(path), Duration.ofSeconds(1), Duration.ofSeconds(30));
  }

  void enqueue(String operationId, String destination, String orderingKey) throws SQLException {
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder()
              .operationId(operationId)
              .destination(destination)
              .orderingKey(orderingKey)
              .payload("{}")
              .build());
    }
  }

  void enqueue(int n) throws SQLException {
    enqueue(n, i -> "billing");
  }

  void enqueue(int n, IntFunction<String> destination) throws SQLException {
    try (Connection c = ds.getConnection()) {
      for (int i = 0; i < n; i++) {
        outbox.enqueue(
            c,
            OutboxMessage.builder()
                .operationId("op-" + i)
                .destination(destination.apply(i))
                .payload("{\"n\":" + i + "}")
                .build());
      }
    }
  }

  @Test
  void claimsNoMoreThanTheWorkersPlusOneBatchAhead() throws Exception {
    enqueue(12);
    receiver.defaultResponse(Response.slow(3_000));
    ClaimLoop l = newLoop(store, 4, 2);
    assertEquals(4, l.claimOnce(), "a claim asks for one batch at most");
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> receiver.requests().size() == 2);
    assertEquals(2, l.claimOnce(), "two sending, four queued at most: room for two more");
    assertEquals(0, l.claimOnce(), "no room: nothing is claimed");
    assertEquals(6L, admin.countByState().get('W'));
    assertEquals(6L, admin.countByState().get('R'));
  }

  /**
   * Guards against one pool of places for every destination: a destination answering after 2 s took
   * every place and the other destination's jobs waited behind it. Now it takes its own bound (4 of
   * 8) and the fast destination's jobs, interleaved with the slow ones, go past its waiting jobs:
   * all of them are received before the slow destination answered its first request.
   */
  @Test
  void aSlowDestinationTakesOnlyItsPlacesAndTheOthersKeepFlowing() throws Exception {
    outbox = new Outbox(OutboxConfig.builder().destinations("billing", "slow").build());
    int slowJobs = 8;
    int fastJobs = 60;
    // Interleaved: slow, fast, slow, fast, ... until the slow jobs are all enqueued, then fast
    // ones.
    enqueue(slowJobs + fastJobs, i -> i % 2 == 0 && i / 2 < slowJobs ? "slow" : "billing");
    try (RecordingHttpReceiver slow = new RecordingHttpReceiver()) {
      slow.defaultResponse(Response.slow(2_000));
      ClaimLoop l =
          newLoop(
              store,
              8,
              8,
              Map.of(
                  "billing",
                      new HttpSink(
                          receiver.url("/b"), Duration.ofSeconds(1), Duration.ofSeconds(30)),
                  "slow",
                      new HttpSink(slow.url("/s"), Duration.ofSeconds(1), Duration.ofSeconds(30))));
      l.limitingDestinations(d -> 4);
      l.start();
      Awaitility.await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> receiver.requests().size() == fastJobs);
      long firstSlowAnswerAt =
          slow.requests().get(0).receivedNanos() + Duration.ofSeconds(2).toNanos();
      long lastFastReceivedAt = receiver.requests().get(fastJobs - 1).receivedNanos();
      assertEquals(
          4, slow.requests().size(), "the slow destination never has more than its 4 places");
      assertTrue(
          lastFastReceivedAt < firstSlowAnswerAt,
          "the fast destination's jobs were all received "
              + Duration.ofNanos(lastFastReceivedAt - firstSlowAnswerAt)
              + " after the slow one's first answer");
      Awaitility.await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> admin.countByState().getOrDefault('S', 0L) == slowJobs + fastJobs);
      assertEquals(slowJobs, slow.requests().size(), "each slow job sent once");
    }
  }

  @Test
  void destinationConcurrencyIsEveryPlaceForOneDestinationHalfForMoreOrAsConfigured() {
    assertEquals(32, ClaimLoop.destinationConcurrency(OptionalInt.empty(), 32, 1));
    assertEquals(16, ClaimLoop.destinationConcurrency(OptionalInt.empty(), 32, 3));
    assertEquals(1, ClaimLoop.destinationConcurrency(OptionalInt.empty(), 1, 2));
    assertEquals(5, ClaimLoop.destinationConcurrency(OptionalInt.of(5), 32, 3));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ClaimLoop.destinationConcurrency(OptionalInt.of(0), 32, 3));
    assertTrue(e.getMessage().startsWith("outbox.relay.destination-concurrency"), e.getMessage());
  }

  @Test
  void emptyClaimReturnsZero() {
    assertEquals(0, newLoop(store, 10, 2).claimOnce());
  }

  @Test
  void stopInterruptsSendsPastTheGraceAndReleasesThemWithoutCountingAnAttempt() throws Exception {
    enqueue(3);
    receiver.defaultResponse(Response.slow(10_000));
    ClaimLoop l = newLoop(store, 10, 2);
    assertEquals(3, l.claimOnce());
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> receiver.requests().size() == 2);
    assertEquals(
        2, l.stop(Duration.ofMillis(200)), "two sends interrupted (and one queued job given back)");
    Map<Character, Long> counts = admin.countByState();
    assertEquals(0L, counts.get('W'), "no job is left leased after shutdown");
    assertEquals(3L, counts.get('R'));
    assertEquals(
        0, admin.findByOperationId("op-0").orElseThrow().attempts(), "release counts no attempt");
  }

  @Test
  void stopLetsInFlightSendsFinishWithinTheGrace() throws Exception {
    enqueue(2);
    receiver.defaultResponse(Response.slow(300));
    ClaimLoop l = newLoop(store, 10, 2);
    assertEquals(2, l.claimOnce());
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> receiver.requests().size() == 2);
    assertEquals(0, l.stop(Duration.ofSeconds(5)));
    assertEquals(2L, admin.countByState().get('S'));
  }

  /**
   * A send in flight holds no connection: 200 places to a sink that answers after 300 ms keep 200
   * sends open at once, while the connections open at once stay within what the start-up check
   * demands for that concurrency (the worker threads, at most 16, plus the loop's own), so a
   * concurrency raised for a slow sink needs no larger pool (PoolSize).
   */
  @Test
  void manySendsInFlightHoldOnlyTheWorkerThreadsConnections() throws Exception {
    int concurrency = 200;
    int jobs = 600;
    enqueue(jobs);
    AtomicInteger open = new AtomicInteger();
    AtomicInteger openPeak = new AtomicInteger();
    DataSource counted = counting(ds, open, openPeak);
    AtomicInteger sending = new AtomicInteger();
    AtomicInteger sendingPeak = new AtomicInteger();
    Map<String, Integer> received = new ConcurrentHashMap<>();
    ScheduledExecutorService answers = Executors.newSingleThreadScheduledExecutor();
    try {
      MessageSink slow =
          m -> {
            sendingPeak.accumulateAndGet(sending.incrementAndGet(), Math::max);
            received.merge(m.operationId(), 1, Integer::sum);
            CompletableFuture<SinkResult> answer = new CompletableFuture<>();
            answers.schedule(
                () -> {
                  sending.decrementAndGet();
                  answer.complete(new SinkResult.Delivered("ok"));
                },
                300,
                TimeUnit.MILLISECONDS);
            return answer;
          };
      ClaimLoop l =
          newLoop(
              new JdbcOutboxStore(counted, new H2Dialect()),
              64,
              concurrency,
              Map.of("billing", slow),
              LEASE,
              true);
      l.start();
      Awaitility.await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> admin.countByState().getOrDefault('S', 0L) == jobs);
    } finally {
      answers.shutdownNow();
    }
    assertEquals(jobs, received.size(), "every job sent");
    assertTrue(received.values().stream().allMatch(n -> n == 1), "none sent twice");
    assertTrue(
        sendingPeak.get() > 2 * ClaimLoop.workerThreads(concurrency),
        "sends in flight at once: " + sendingPeak.get());
    // Within what the start-up check demands for this concurrency.
    assertTrue(
        openPeak.get() <= PoolSize.needed(concurrency),
        "connections open at once: " + openPeak.get());
  }

  /** {@code ds}, counting the connections open at once ({@code open}) and their peak. */
  static DataSource counting(DataSource ds, AtomicInteger open, AtomicInteger peak) {
    return (DataSource)
        Proxy.newProxyInstance(
            ClaimLoopTest.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result;
              try {
                result = method.invoke(ds, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (!(result instanceof Connection c)) {
                return result;
              }
              peak.accumulateAndGet(open.incrementAndGet(), Math::max);
              AtomicBoolean closed = new AtomicBoolean();
              return Proxy.newProxyInstance(
                  ClaimLoopTest.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (p, m, a) -> {
                    if (m.getName().equals("close") && closed.compareAndSet(false, true)) {
                      open.decrementAndGet();
                    }
                    try {
                      return m.invoke(c, a);
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
            });
  }

  @Test
  void runningLoopDeliversEverythingOnce() throws Exception {
    enqueue(40);
    ClaimLoop l = newLoop(store, 8, 4);
    l.start();
    Awaitility.await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> admin.countByState().get('S') == 40L);
    for (int i = 0; i < 40; i++) {
      assertEquals(1, receiver.acceptedCount("op-" + i));
    }
    assertEquals(40, receiver.requests().size(), "healthy run: no redelivery");
  }

  @Test
  void idleLoopBacksOffInsteadOfSpinning() {
    ClaimLoop l = newLoop(store, 8, 4);
    long started = System.nanoTime();
    l.start();
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> l.claimStatements() >= 6);
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    // Empty claims wait 10, 20, 40, 80, 160 ms in between: six of them are never a hot loop.
    assertTrue(took.toMillis() >= 310, "six idle claims took " + took);
  }

  @Test
  void loopSurvivesADatabaseThatThrowsAndBacksOff() {
    DataSource broken = new BrokenDataSource();
    ClaimLoop l = newLoop(new JdbcOutboxStore(broken, new H2Dialect()), 8, 4);
    long started = System.nanoTime();
    l.start();
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> l.claimStatements() >= 4);
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    assertTrue(l.running(), "the loop keeps running");
    assertNotNull(l.lastError());
    // Pauses of 100, 200, 400 ms between the tries: a handful of tries, not a hot loop.
    assertTrue(
        took.toMillis() >= 700, "four claim attempts against a failing database took " + took);
  }

  /**
   * A job handed over by its predecessor's completion is held like a claimed one: it waits in the
   * queue behind its saturated destination for three leases, the heartbeat renews it meanwhile (a
   * reaper runs all along and finds nothing expired), and it is sent once, under the claim the
   * hand-over made, after the destination's place freed.
   */
  @Test
  void aHandedOverJobIsRenewedByTheHeartbeatWhileItWaitsForItsTurn() throws Exception {
    Duration lease = Duration.ofMillis(900);
    outbox = new Outbox(OutboxConfig.builder().destinations("billing", "slow").build());
    enqueue("op-c", "slow", null);
    enqueue("op-a", "billing", "k");
    enqueue("op-b", "slow", "k");
    receiver.script("op-c", Response.slow(3 * lease.toMillis()));
    ClaimLoop l =
        newLoop(store, 4, 2, Map.of("billing", http("/b"), "slow", http("/s")), lease, true);
    l.limitingDestinations(d -> 1);
    heartbeat.start();
    assertEquals(2, l.claimOnce(), "C and A; B waits behind A, its key's head");
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              assertEquals(0, store.releaseExpiredLeases(5, 10).total(), "no lease expired");
              return admin.findByOperationId("op-b").orElseThrow().state() == 'S';
            });
    assertEquals(1, l.claimStatements(), "B came by the hand-over, not by a claim");
    assertEquals(1, receiver.requestsFor("op-b").size(), "B sent once");
    long cAnswered = receiver.requestsFor("op-c").get(0).receivedNanos() + 3 * lease.toNanos();
    assertTrue(
        receiver.requestsFor("op-b").get(0).receivedNanos() >= cAnswered,
        "B was sent once C had answered, three leases after the hand-over");
    long b = admin.findByOperationId("op-b").orElseThrow().id();
    assertEquals(
        List.of(AttemptOutcome.DELIVERED),
        admin.attempts(b).stream().map(StoredAttempt::outcome).toList(),
        "delivered at the first try: no expired lease, no stale completion");
  }

  /**
   * Guards against a hand-over and a claim spending the same room: the completion's hand-over
   * reserves its room before its transaction runs, so the claims the loop makes meanwhile (here
   * while that transaction is held up) leave it free, and the claims held never exceed {@code 2 x
   * (concurrency + batch)}, however the two interleave.
   */
  @Test
  void aHandOverAndTheClaimsMadeWhileItRunsStayWithinTheHoldLimit() throws Exception {
    enqueue("k1-a", "billing", "k1");
    enqueue("k2-a", "billing", "k2");
    enqueue("k1-b", "billing", "k1");
    enqueue("k2-b", "billing", "k2");
    for (int i = 0; i < 20; i++) {
      enqueue("free-" + i, "billing", null);
    }
    CountDownLatch handingOver = new CountDownLatch(1);
    CountDownLatch goOn = new CountDownLatch(1);
    OutboxStore heldUp =
        (OutboxStore)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {OutboxStore.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("markDeliveredAll")
                      && args.length == 2
                      && handingOver.getCount() > 0) {
                    handingOver.countDown();
                    goOn.await();
                  }
                  try {
                    return method.invoke(store, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    ClaimLoop l = newLoop(heldUp, 2, 2, Map.of("billing", http("/b")), LEASE, true);
    l.start();
    assertTrue(handingOver.await(30, TimeUnit.SECONDS), "the first keyed batch hands over");
    // Meanwhile the loop claims the free jobs, whose completions wait behind the held-up batch.
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> l.inFlight() + l.reserved() == l.maxHeld());
    assertTrue(l.reserved() > 0, "the hand-over's room stayed reserved while the loop claimed");
    assertEquals(0, l.room());
    goOn.countDown();
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> admin.countByState().get('S') == 24L);
    assertTrue(l.heldPeak() <= l.maxHeld(), "held at most " + l.heldPeak() + " of " + l.maxHeld());
    List<String> order =
        receiver.requests().stream()
            .map(r -> r.header("Idempotency-Key"))
            .filter(k -> k.startsWith("k"))
            .toList();
    assertTrue(
        order.indexOf("k1-a") < order.indexOf("k1-b")
            && order.indexOf("k2-a") < order.indexOf("k2-b"),
        "each key in order: " + order);
    assertEquals(24, receiver.requests().size(), "each job sent once");
  }

  /** The room reserved for a running claim statement is not offered to another until it is used. */
  @Test
  void roomReservedForAClaimStatementIsNotSpentTwice() throws Exception {
    enqueue(6);
    receiver.defaultResponse(Response.slow(3_000));
    ClaimLoop l = newLoop(store, 2, 2);
    assertEquals(2, l.reserve(5), "at most a batch");
    assertEquals(2, l.claimOnce(), "two places free, the reserved two count as queued");
    assertEquals(0, l.claimOnce(), "one batch ahead of the places is reserved already");
    assertEquals(0, l.reserve(2));
    l.offer(List.of(), System.nanoTime(), 2);
    assertEquals(2, l.claimOnce(), "the reservation came back unused: its room is free again");
  }

  /** A DataSource whose every connection attempt fails, like a database that is down. */
  static final class BrokenDataSource implements DataSource {
    @Override
    public Connection getConnection() throws SQLException {
      throw new SQLException("Connection refused (test)", "08001");
    }

    @Override
    public Connection getConnection(String u, String p) throws SQLException {
      return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() {
      return Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return false;
    }
  }
}
