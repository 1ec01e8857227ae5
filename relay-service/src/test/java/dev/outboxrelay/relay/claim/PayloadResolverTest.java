package dev.outboxrelay.relay.claim;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.store.dialect.H2Dialect;
import dev.outboxrelay.relay.lease.LeaseHeartbeat;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.HttpSink;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.sink.SinkResult;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The relay's resolver of by-reference payloads, through {@link Deliverer} on H2 with a real HTTP
 * receiver: the sink gets the full body; a missing body is permanent, a database error a retry.
 */
class PayloadResolverTest {
  static final Duration LEASE = Duration.ofSeconds(5);

  /** Small, so that a few kilobytes are stored by reference. */
  static final int INLINE = 1024;

  JdbcDataSource ds;
  JdbcOutboxStore store;
  JdbcOutboxAdminStore admin;
  RecordingHttpReceiver receiver;
  LeaseHeartbeat heartbeat;
  final Outbox outbox =
      new Outbox(OutboxConfig.builder().destinations("billing").inlinePayloadBytes(INLINE).build());

  @BeforeEach
  void setUp() throws Exception {
    ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:payloads-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    OutboxSchema.migrate(ds);
    store = new JdbcOutboxStore(ds, new H2Dialect());
    admin = new JdbcOutboxAdminStore(ds, new H2Dialect());
    receiver = new RecordingHttpReceiver();
  }

  @AfterEach
  void tearDown() {
    if (heartbeat != null) {
      heartbeat.close();
    }
    receiver.close();
  }

  @Test
  void anInlineJobIsPassedThroughWithoutAQuery() throws Exception {
    enqueue("op-inline", "{\"small\":true}");
    ClaimedJob m = claimOne();
    // Payload reads fail on this store: an inline job must not make one.
    PayloadResolver.Resolution r =
        new PayloadResolver(new JdbcOutboxStore(failingPayloadReads(), new H2Dialect())).resolve(m);
    assertSame(m, r.message());
    assertNull(r.failure());
  }

  @Test
  void theSinkGetsTheFullBodyUnderTheSameClaim() throws Exception {
    String body = "{\"text\":\"" + "Zoë ✓ 東京 😀 ".repeat(200) + "\"}";
    enqueue("op-large", body);
    ClaimedJob claimed = claimOne();
    assertTrue(claimed.payloadByReference());

    deliverer(store).deliver(heartbeat.hold(claimed, System.nanoTime()), () -> {});

    StoredJob m = admin.findByOperationId("op-large").orElseThrow();
    assertEquals('S', m.state());
    RecordingHttpReceiver.Request req = receiver.requestsFor("op-large").get(0);
    assertArrayEquals(
        body.getBytes(StandardCharsets.UTF_8), req.body().getBytes(StandardCharsets.UTF_8));
    assertEquals(List.of(AttemptOutcome.DELIVERED), outcomes(m));
  }

  @Test
  void aMissingBodyIsAPermanentFailureAndNothingIsSent() throws Exception {
    enqueue("op-missing", "x".repeat(INLINE + 1));
    ClaimedJob claimed = claimOne();
    try (Connection c = ds.getConnection()) {
      c.createStatement()
          .executeUpdate("DELETE FROM outbox_payload WHERE message_id = " + claimed.id());
    }

    PayloadResolver.Resolution r = new PayloadResolver(store).resolve(claimed);
    SinkResult.PermanentFailure f =
        assertInstanceOf(SinkResult.PermanentFailure.class, r.failure());
    assertEquals(PayloadResolver.MISSING, f.errorClass());

    deliverer(store).deliver(heartbeat.hold(claimed, System.nanoTime()), () -> {});
    StoredJob m = admin.findByOperationId("op-missing").orElseThrow();
    assertEquals('D', m.state());
    assertTrue(
        m.lastError()
            .startsWith(
                "PayloadMissing: permanent failure: the by-reference payload of message "
                    + m.id()
                    + " is missing"),
        m.lastError());
    assertEquals(List.of(), receiver.requests());
  }

  @Test
  void aDatabaseErrorWhileLoadingIsARetryAndNothingIsSent() throws Exception {
    enqueue("op-db-down", "x".repeat(INLINE + 1));
    ClaimedJob claimed = claimOne();
    JdbcOutboxStore flaky = new JdbcOutboxStore(failingPayloadReads(), new H2Dialect());

    deliverer(flaky).deliver(heartbeat.hold(claimed, System.nanoTime()), () -> {});

    StoredJob m = admin.findByOperationId("op-db-down").orElseThrow();
    assertEquals('R', m.state(), "back to ready, with backoff");
    assertEquals(1, m.attempts());
    assertTrue(
        m.lastError()
            .startsWith(
                "PayloadLoadFailed: loading the by-reference payload of message "
                    + m.id()
                    + " failed"),
        m.lastError());
    assertTrue(m.lastError().contains("connection reset (test)"), m.lastError());
    assertEquals(List.of(AttemptOutcome.RETRY), outcomes(m));
    assertEquals(List.of(), receiver.requests());
  }

  // ---- helpers -------------------------------------------------------------------------------

  void enqueue(String op, String payload) throws SQLException {
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder()
              .operationId(op)
              .destination("billing")
              .contentType("text/plain; charset=utf-8")
              .payload(payload)
              .build());
    }
  }

  ClaimedJob claimOne() {
    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(1, LEASE));
    assertEquals(1, claimed.size());
    return claimed.get(0);
  }

  Deliverer deliverer(JdbcOutboxStore s) {
    SinkRegistry sinks =
        new SinkRegistry(
            Map.of(
                "billing",
                new HttpSink(receiver.url("/b"), Duration.ofSeconds(1), Duration.ofSeconds(10))));
    RelayMetrics metrics = new RelayMetrics(new SimpleMeterRegistry());
    heartbeat = new LeaseHeartbeat(s, LEASE, null, c -> metrics.staleCompletion("renew"));
    return new Deliverer(
        s,
        sinks,
        new Backoff(Duration.ofMillis(10), 2, Duration.ofMillis(100), 0, Math::random),
        metrics,
        5,
        LEASE,
        () -> Duration.ZERO);
  }

  List<AttemptOutcome> outcomes(StoredJob m) {
    return admin.attempts(m.id()).stream().map(a -> a.outcome()).toList();
  }

  /**
   * The H2 database, except that every statement reading outbox_payload fails like a dropped
   * connection.
   */
  DataSource failingPayloadReads() {
    return (DataSource)
        Proxy.newProxyInstance(
            DataSource.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = invoke(ds, method, args);
              if (!(result instanceof Connection real)) {
                return result;
              }
              return Proxy.newProxyInstance(
                  Connection.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (p, m, a) -> {
                    if (m.getName().equals("prepareStatement")
                        && String.valueOf(a[0]).contains("FROM outbox_payload")) {
                      throw new SQLException("connection reset (test)", "08006");
                    }
                    return invoke(real, m, a);
                  });
            });
  }

  private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args)
      throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
