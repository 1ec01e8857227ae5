package dev.outboxrelay.relay;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.StoredAttempt;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver.Response;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The running relay against real PostgreSQL and a real HTTP receiver. Test profile: lease 2s,
 * reaper every 200ms, max attempts 4, backoff 50..200ms.
 */
@QuarkusTest
@QuarkusTestResource(RelayTestResources.class)
class RelayDeliveryTest {
  static final Duration WAIT = Duration.ofSeconds(30);

  @Inject
  @io.quarkus.agroal.DataSource("postgresql")
  AgroalDataSource ds;

  @Inject RelayService relay;
  @Inject RelayConfig config;

  RecordingHttpReceiver receiver;
  OutboxStore store;
  OutboxAdminStore admin;
  final Outbox outbox =
      new Outbox(OutboxConfig.builder().destinations("billing", "nowhere", "signed").build());

  @BeforeEach
  void clean() throws SQLException {
    receiver = RelayTestResources.receiver;
    receiver.reset();
    store = relay.store();
    admin = relay.admin();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DELETE FROM outbox_attempt");
      s.execute("DELETE FROM outbox_message");
    }
  }

  String enqueue(String destination, String payload) throws SQLException {
    String op = "op-" + UUID.randomUUID();
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder()
              .operationId(op)
              .destination(destination)
              .payload(payload)
              .header("X-Trace", "t-" + op)
              .build());
    }
    return op;
  }

  StoredJob awaitState(String op, char state) {
    Awaitility.await()
        .atMost(WAIT)
        .until(() -> admin.findByOperationId(op).orElseThrow().state() == state);
    return admin.findByOperationId(op).orElseThrow();
  }

  List<AttemptOutcome> outcomes(StoredJob m) {
    return admin.attempts(m.id()).stream().map(StoredAttempt::outcome).toList();
  }

  @Test
  void deliversEveryJobOnceWithItsIdempotencyKey() throws Exception {
    List<String> ops = new java.util.ArrayList<>();
    for (int i = 0; i < 60; i++) {
      ops.add(enqueue("billing", "{\"i\":" + i + "}"));
    }
    Awaitility.await().atMost(WAIT).until(() -> admin.countByState().get('S') == 60L);
    for (String op : ops) {
      assertEquals(1, receiver.acceptedCount(op), op);
      RecordingHttpReceiver.Request req = receiver.requestsFor(op).get(0);
      StoredJob m = admin.findByOperationId(op).orElseThrow();
      assertEquals(String.valueOf(m.id()), req.header("X-Outbox-Message-Id"));
      assertEquals("1", req.header("X-Outbox-Attempt"));
      assertEquals("t-" + op, req.header("X-Trace"));
      assertEquals(1, m.attempts());
      assertNotNull(m.sentAt());
      assertEquals(null, m.claimToken());
      assertEquals(List.of(AttemptOutcome.DELIVERED), outcomes(m));
    }
    assertEquals(60, receiver.requests().size(), "a healthy run delivers each job exactly once");
  }

  /**
   * docs/relay.md "Keys and plain-SQL producers": a producer without the library enqueues with one
   * INSERT of the four required columns; the schema's defaults fill the rest (state R, due now) and
   * the relay delivers it.
   */
  @Test
  void aJobInsertedWithPlainSqlIsDelivered() throws Exception {
    String op = "op-" + UUID.randomUUID();
    try (Connection c = ds.getConnection();
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO outbox_message (operation_id, destination, payload, content_type) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, op);
      ps.setString(2, "billing");
      ps.setString(3, "{\"plain\":\"sql\"}");
      ps.setString(4, "application/json");
      assertEquals(1, ps.executeUpdate());
    }
    StoredJob m = awaitState(op, 'S');
    assertEquals(1, receiver.acceptedCount(op));
    RecordingHttpReceiver.Request req = receiver.requestsFor(op).get(0);
    assertEquals("{\"plain\":\"sql\"}", req.body());
    assertEquals(op, req.header("Idempotency-Key"));
    assertEquals(List.of(AttemptOutcome.DELIVERED), outcomes(m));
  }

  @Test
  void transientFailuresRetryWithBackoffThenDeliver() throws Exception {
    String op = "op-" + UUID.randomUUID();
    receiver.script(
        op, Response.status(500), new Response(503, Map.of("Retry-After", "1"), "busy", 0));
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c, OutboxMessage.builder().operationId(op).destination("billing").payload("{}").build());
    }
    StoredJob m = awaitState(op, 'S');
    assertEquals(3, m.attempts());
    assertEquals(
        List.of(AttemptOutcome.RETRY, AttemptOutcome.RETRY, AttemptOutcome.DELIVERED), outcomes(m));
    List<RecordingHttpReceiver.Request> reqs = receiver.requestsFor(op);
    assertEquals(
        List.of("1", "2", "3"), reqs.stream().map(r -> r.header("X-Outbox-Attempt")).toList());
    long retryAfterGap =
        Duration.ofNanos(reqs.get(2).receivedNanos() - reqs.get(1).receivedNanos()).toMillis();
    assertTrue(
        retryAfterGap >= 900, "Retry-After: 1 is honoured, gap was " + retryAfterGap + " ms");
    StoredAttempt second = admin.attempts(m.id()).get(1);
    assertEquals("HTTP 503", second.errorClass());
    assertTrue(second.responseSummary().contains("busy"), second.responseSummary());
  }

  @Test
  void permanentFailureGoesDeadWithItsDiagnosis() throws Exception {
    String op = "op-" + UUID.randomUUID();
    receiver.script(op, new Response(422, Map.of(), "{\"error\":\"amount missing\"}", 0));
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c, OutboxMessage.builder().operationId(op).destination("billing").payload("{}").build());
    }
    StoredJob m = awaitState(op, 'D');
    assertEquals(1, m.attempts());
    assertTrue(m.lastError().contains("422"), m.lastError());
    assertEquals(List.of(AttemptOutcome.DEAD), outcomes(m));
    assertTrue(admin.attempts(m.id()).get(0).responseSummary().contains("amount missing"));
  }

  @Test
  void transientFailureForeverGoesDeadAtMaxAttempts() throws Exception {
    String op = "op-" + UUID.randomUUID();
    receiver.script(
        op,
        Response.status(503),
        Response.status(503),
        Response.status(503),
        Response.status(503),
        Response.status(503));
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c, OutboxMessage.builder().operationId(op).destination("billing").payload("{}").build());
    }
    StoredJob m = awaitState(op, 'D');
    assertEquals(4, m.attempts(), "test profile: max-attempts=4");
    assertTrue(m.lastError().contains("gave up after 4 attempts"), m.lastError());
    assertEquals(
        List.of(
            AttemptOutcome.RETRY, AttemptOutcome.RETRY, AttemptOutcome.RETRY, AttemptOutcome.DEAD),
        outcomes(m));
    assertEquals(4, receiver.requestsFor(op).size());
  }

  @Test
  void unknownDestinationGoesDeadNamingTheKey() throws Exception {
    String op = enqueue("nowhere", "{}");
    StoredJob m = awaitState(op, 'D');
    assertTrue(m.lastError().contains("outbox.destinations.nowhere.type"), m.lastError());
  }

  @Test
  void heartbeatKeepsALongSendOwnedAndItCompletesOnce() throws Exception {
    String op = "op-" + UUID.randomUUID();
    receiver.script(op, Response.slow(5_000)); // 2.5 x the 2s lease
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c, OutboxMessage.builder().operationId(op).destination("billing").payload("{}").build());
    }
    StoredJob m = awaitState(op, 'S');
    assertEquals(1, receiver.requestsFor(op).size(), "no other claim while the heartbeat ran");
    assertEquals(1, m.attempts());
    assertEquals(List.of(AttemptOutcome.DELIVERED), outcomes(m));
  }

  @Test
  void ownershipLostMidSendIsCountedStaleAndChangesNothing() throws Exception {
    String op = "op-" + UUID.randomUUID();
    receiver.script(op, Response.slow(1_500));
    double staleBefore = relay.metrics().staleCompletionCount();
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c, OutboxMessage.builder().operationId(op).destination("billing").payload("{}").build());
    }
    Awaitility.await().atMost(WAIT).until(() -> receiver.requestsFor(op).size() == 1);
    // Another owner takes the job while the send runs (as after an expired lease and a re-claim).
    UUID otherOwner = UUID.randomUUID();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE outbox_message SET claim_token = ?, lease_until = now() + interval '1 hour'"
                    + " WHERE operation_id = ? AND state = 'W'")) {
      ps.setObject(1, otherOwner);
      ps.setString(2, op);
      assertEquals(1, ps.executeUpdate());
    }
    Awaitility.await()
        .atMost(WAIT)
        .until(() -> !outcomes(admin.findByOperationId(op).orElseThrow()).isEmpty());
    // The heartbeat's renewal (at lease/3, mid-send) and the completion both hit 0 rows.
    assertTrue(
        relay.metrics().staleCompletionCount() >= staleBefore + 2,
        "stale renewal and stale completion are both counted");
    StoredJob m = admin.findByOperationId(op).orElseThrow();
    assertEquals('W', m.state(), "the stale owner's completion changed nothing");
    assertEquals(otherOwner, m.claimToken());
    assertEquals(0, m.attempts());
    assertEquals(List.of(AttemptOutcome.STALE), outcomes(m));
  }

  @Test
  void signedDestinationSendsAVerifiableSignatureAndTheJobIsSent() throws Exception {
    receiver.requireSignature(
        "/signed", RelayTestResources.SIGNED_SECRET.getBytes(StandardCharsets.UTF_8));
    String op = enqueue("signed", "{\"invoice\":\"Zoë ✓\"}");
    awaitState(op, 'S');
    RecordingHttpReceiver.Request req = receiver.requestsFor(op).get(0);
    WebhookSignature.Verification v =
        WebhookSignature.verify(
            RelayTestResources.SIGNED_SECRET.getBytes(StandardCharsets.UTF_8),
            req.header(WebhookSignature.HEADER),
            req.body().getBytes(StandardCharsets.UTF_8),
            Instant.now(),
            WebhookSignature.DEFAULT_TOLERANCE);
    assertTrue(v.valid(), v.detail());
  }

  @Test
  void aSignatureTheSinkRejectsEndsDeadWithThe401() throws Exception {
    // The receiver checks with a different secret than the relay signs with: every request is 401.
    receiver.requireSignature("/signed", "not-the-relays-secret".getBytes(StandardCharsets.UTF_8));
    String op = enqueue("signed", "{}");
    StoredJob m = awaitState(op, 'D');
    assertEquals(1, m.attempts(), "401 is permanent: no retry");
    assertTrue(m.lastError().contains("401"), m.lastError());
    assertEquals(List.of(AttemptOutcome.DEAD), outcomes(m));
    StoredAttempt attempt = admin.attempts(m.id()).get(0);
    assertEquals("HTTP 401", attempt.errorClass());
    assertTrue(attempt.responseSummary().contains("BAD_SIGNATURE"), attempt.responseSummary());
    assertTrue(
        !m.lastError().contains(RelayTestResources.SIGNED_SECRET)
            && !attempt.responseSummary().contains(RelayTestResources.SIGNED_SECRET));
  }

  /** About 500 KB of non-ASCII JSON: over the 64 KiB inline threshold, so stored by reference. */
  static String largeJson(String op) {
    String text = "Zoë ✓ 東京 😀 naïve façade – ";
    return "{\"op\":\""
        + op
        + "\",\"text\":\""
        + text.repeat(500_000 / text.getBytes(StandardCharsets.UTF_8).length)
        + "\"}";
  }

  @Test
  void aLargePayloadIsDeliveredByteExactFromOutOfBandStorage() throws Exception {
    String op = "op-" + UUID.randomUUID();
    String payload = largeJson(op);
    byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
    assertTrue(bytes.length > 490_000 && bytes.length < 510_000, "size " + bytes.length);
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder().operationId(op).destination("billing").payload(payload).build());
    }
    StoredJob queued = admin.findByOperationId(op).orElseThrow();
    assertTrue(queued.payloadByReference(), "over the inline threshold");
    assertTrue(queued.payload().length() < 200, "the row holds a reference: " + queued.payload());

    StoredJob m = awaitState(op, 'S');
    List<RecordingHttpReceiver.Request> reqs = receiver.requestsFor(op);
    assertEquals(1, reqs.size());
    RecordingHttpReceiver.Request req = reqs.get(0);
    assertEquals(op, req.header("Idempotency-Key"));
    assertEquals(String.valueOf(m.id()), req.header("X-Outbox-Message-Id"));
    assertArrayEquals(
        bytes, req.body().getBytes(StandardCharsets.UTF_8), "the full body, byte for byte");
    assertEquals(String.valueOf(bytes.length), req.header("Content-Length"));
    assertEquals(List.of(AttemptOutcome.DELIVERED), outcomes(m));
  }

  @Test
  void aSignedLargePayloadIsSignedOverTheFullBody() throws Exception {
    byte[] secret = RelayTestResources.SIGNED_SECRET.getBytes(StandardCharsets.UTF_8);
    receiver.requireSignature("/signed", secret); // answers 401 to a signature over anything else
    String op = "op-" + UUID.randomUUID();
    String payload = largeJson(op);
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder().operationId(op).destination("signed").payload(payload).build());
    }
    awaitState(op, 'S');
    RecordingHttpReceiver.Request req = receiver.requestsFor(op).get(0);
    assertEquals(payload, req.body());
    WebhookSignature.Verification v =
        WebhookSignature.verify(
            secret,
            req.header(WebhookSignature.HEADER),
            payload.getBytes(StandardCharsets.UTF_8),
            Instant.now(),
            WebhookSignature.DEFAULT_TOLERANCE);
    assertTrue(v.valid(), v.detail());
    String reference = admin.findByOperationId(op).orElseThrow().payload();
    assertFalse(
        WebhookSignature.verify(
                secret,
                req.header(WebhookSignature.HEADER),
                reference.getBytes(StandardCharsets.UTF_8),
                Instant.now(),
                WebhookSignature.DEFAULT_TOLERANCE)
            .valid(),
        "the signature covers the body, not the reference");
  }

  @Test
  void aMissingOutOfBandBodyEndsDeadWithADiagnosisAndIsNeverSent() throws Exception {
    String op = "op-" + UUID.randomUUID();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      long id =
          outbox
              .enqueue(
                  c,
                  OutboxMessage.builder()
                      .operationId(op)
                      .destination("billing")
                      .payload(largeJson(op))
                      .build())
              .messageId();
      // The body row vanishes before the relay sees the job (a hand-made delete, a bad restore).
      try (PreparedStatement ps =
          c.prepareStatement("DELETE FROM outbox_payload WHERE message_id = ?")) {
        ps.setLong(1, id);
        assertEquals(1, ps.executeUpdate());
      }
      c.commit();
      c.setAutoCommit(true);
    }
    StoredJob m = awaitState(op, 'D');
    assertEquals(1, m.attempts(), "permanent: no retry");
    assertTrue(
        m.lastError().contains("PayloadMissing")
            && m.lastError().contains("is missing: no outbox_payload row"),
        m.lastError());
    assertEquals(List.of(AttemptOutcome.DEAD), outcomes(m));
    assertEquals(
        List.of(), receiver.requestsFor(op), "a reference is never sent in place of the body");
  }

  @Test
  void aCorruptOutOfBandBodyEndsDeadWithADiagnosisAndIsNeverSent() throws Exception {
    String op = "op-" + UUID.randomUUID();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      long id =
          outbox
              .enqueue(
                  c,
                  OutboxMessage.builder()
                      .operationId(op)
                      .destination("billing")
                      .payload(largeJson(op))
                      .build())
              .messageId();
      try (PreparedStatement ps =
          c.prepareStatement(
              "UPDATE outbox_payload SET body = substr(body, 1, 1000) WHERE message_id = ?")) {
        ps.setLong(1, id);
        assertEquals(1, ps.executeUpdate());
      }
      c.commit();
      c.setAutoCommit(true);
    }
    StoredJob m = awaitState(op, 'D');
    assertTrue(
        m.lastError().contains("PayloadCorrupt") && m.lastError().contains("is corrupt (body is"),
        m.lastError());
    assertEquals(List.of(), receiver.requestsFor(op));
  }

  @Test
  void theSecretDoesNotShowInTheConfigOrTheSink() {
    assertTrue(config.destinations().get("signed").hmacSecret().isPresent());
    assertTrue(
        !config.destinations().get("signed").toString().contains(RelayTestResources.SIGNED_SECRET),
        config.destinations().get("signed").toString());
    assertTrue(!config.destinations().toString().contains(RelayTestResources.SIGNED_SECRET));
  }

  @Test
  void metricsAndHealthAreExposed() throws Exception {
    String op = enqueue("billing", "{}");
    awaitState(op, 'S');
    Awaitility.await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                given()
                    .get("/q/metrics")
                    .then()
                    .statusCode(200)
                    .body(
                        containsString(
                            "outbox_delivery_attempts_total{destination=\"billing\",outcome=\"delivered\",source=\"default\"}"))
                    .body(containsString("outbox_messages{source=\"default\",state=\"S\"} 1.0"))
                    .body(containsString("outbox_ready_oldest_age_seconds"))
                    .body(containsString("outbox_stale_completions_total"))
                    .body(containsString("outbox_expired_leases_total"))
                    .body(containsString("outbox_dead_total"))
                    .body(containsString("outbox_delivery_seconds_bucket"))
                    .body(containsString("outbox_end_to_end_seconds_count")));
    given().get("/q/health/ready").then().statusCode(200).body("status", equalTo("UP"));
    given().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
  }
}
