package dev.outboxrelay.relay.reconciliation;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.store.FleetLock;
import dev.outboxrelay.outbox.store.JdbcFleetLock;
import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.ReconciliationStore;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver.Response;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reconciliation in the running relay against real PostgreSQL and a real HTTP sink whose ledger
 * ({@code /ledger}, the demo sink's format) the tests falsify. The {@code ledgered} destination
 * re-drives sent_unconfirmed jobs and accepts confirmed_not_sent ones; grace period 1s.
 *
 * <p>Requests carry HTTP Basic credentials for the roles the endpoints declare: the test users of
 * the admin API's security ({@code %test} users operator/operator-pw, viewer/viewer-pw). Without a
 * security extension on the classpath the annotations, and these headers, are inert.
 */
@QuarkusTest
@QuarkusTestResource(RelayTestResources.class)
class ReconciliationResourceTest {
  static final Duration WAIT = Duration.ofSeconds(30);
  static final String DEST = "ledgered";

  @Inject
  @io.quarkus.agroal.DataSource("postgresql")
  AgroalDataSource ds;

  @Inject RelayService relay;
  @Inject ReconciliationService reconciliation;

  RecordingHttpReceiver receiver;
  OutboxStore store;
  OutboxAdminStore admin;
  final Outbox outbox = new Outbox(OutboxConfig.builder().destinations(DEST).build());

  @BeforeEach
  void clean() throws SQLException {
    receiver = RelayTestResources.receiver;
    receiver.reset();
    store = relay.store();
    admin = relay.admin();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DELETE FROM outbox_reconciliation_item");
      s.execute("DELETE FROM outbox_reconciliation_run");
      s.execute("DELETE FROM outbox_confirmation");
      s.execute("DELETE FROM outbox_lock");
      s.execute("DELETE FROM outbox_attempt");
      s.execute("DELETE FROM outbox_message");
    }
  }

  static RequestSpecification operator() {
    return given().auth().preemptive().basic("operator", "operator-pw");
  }

  static RequestSpecification viewer() {
    return given().auth().preemptive().basic("viewer", "viewer-pw");
  }

  void enqueue(String op) throws SQLException {
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder()
              .operationId(op)
              .destination(DEST)
              .payload("{\"op\":\"" + op + "\"}")
              .build());
    }
  }

  StoredJob job(String op) {
    return admin.findByOperationId(op).orElseThrow();
  }

  void awaitState(String op, char state) {
    Awaitility.await().atMost(WAIT).until(() -> job(op).state() == state);
  }

  String window(Instant start, Instant end) {
    return "{\"window_start\":\"" + start + "\",\"window_end\":\"" + end + "\"}";
  }

  @Test
  void reportsEveryDifferenceExactlyAndActsOnlyOnRowsThatDidNotChange() throws Exception {
    Instant start = admin.databaseNow().minusSeconds(60);
    receiver.script("dead-1", new Response(422, Map.of(), "{\"error\":\"amount missing\"}", 0));
    // The sink applies lost-ack-1 but its answer is an error: a lost completion, seen as D.
    receiver.script(
        "lost-ack-1", new Response(422, Map.of(), "{\"error\":\"timeout upstream\"}", 0));
    for (String op : List.of("ok-1", "ok-2", "lost-1", "twice-1", "dead-1", "lost-ack-1")) {
      enqueue(op);
    }
    for (String op : List.of("ok-1", "ok-2", "lost-1", "twice-1")) {
      awaitState(op, 'S');
    }
    awaitState("dead-1", 'D');
    awaitState("lost-ack-1", 'D');
    receiver.forgetInLedger("lost-1");
    receiver.applyAgainInLedger("twice-1");
    receiver.confirmInLedger("lost-ack-1", DEST);
    receiver.confirmInLedger("ghost-1", DEST);
    Instant lostSentAt = job("lost-1").sentAt();
    Awaitility.await()
        .atMost(WAIT)
        .until(() -> admin.databaseNow().isAfter(lostSentAt.plusSeconds(1)));
    Instant end = admin.databaseNow().plusSeconds(60);

    JsonPath first =
        operator()
            .contentType("application/json")
            .body(window(start, end))
            .post("/reconciliation/runs")
            .then()
            .statusCode(201)
            .header("Location", containsString("/reconciliation/runs/"))
            .extract()
            .jsonPath();

    long runId = first.getLong("run_id");
    assertEquals(start, Instant.parse(first.getString("window_start")));
    assertEquals(end, Instant.parse(first.getString("window_end")));
    assertEquals("operator", first.getString("triggered_by"));
    assertEquals(reconciliation.owner(), first.getString("owner"));
    assertNotNull(first.getString("finished_at"));
    assertEquals(null, first.getString("error"));
    assertEquals(counts(2, 1, 2, 1, 1), first.getMap("counts"));
    assertEquals(0, first.getInt("pending"));
    StoredJob lostAck = job("lost-ack-1");
    StoredJob dead = job("dead-1");
    StoredJob twice = job("twice-1");
    StoredJob lost = admin.findJob(job("lost-1").id()).orElseThrow();
    assertEquals(
        List.of(
            item("ghost-1", null, null, "confirmed_not_sent", null, 1, null, null),
            item(
                "lost-ack-1",
                lostAck.id(),
                "D",
                "confirmed_not_sent",
                null,
                1,
                lostAck.lastError(),
                "accepted"),
            item("dead-1", dead.id(), "D", "dead", null, 0, dead.lastError(), null),
            item("twice-1", twice.id(), "S", "duplicate_effects", twice.sentAt(), 2, null, null),
            item("lost-1", lost.id(), "S", "sent_unconfirmed", lostSentAt, 0, null, "redriven")),
        items(first));
    assertTrue(dead.lastError().contains("422"), dead.lastError());
    assertTrue(
        lostAck.lastError().contains("422"),
        "the diagnosis stays after acceptance: " + lostAck.lastError());

    // The moves: matched S -> C; the lost completion accepted; the unconfirmed job re-driven
    // under the same operation ID (the sink sees the same Idempotency-Key again and applies it).
    for (String op : List.of("ok-1", "ok-2")) {
      assertEquals('C', job(op).state());
      assertEquals(receiver.ledgerEntry(op).orElseThrow().appliedAt(), job(op).confirmedAt());
    }
    assertEquals('C', lostAck.state());
    assertNotNull(lostAck.sentAt());
    assertEquals('S', twice.state(), "a duplicate effect is reported, not confirmed");
    assertEquals('D', dead.state());
    Awaitility.await()
        .atMost(WAIT)
        .until(() -> receiver.requestsFor("lost-1").size() == 2 && job("lost-1").state() == 'S');
    assertEquals(
        String.valueOf(lost.id()),
        receiver.requestsFor("lost-1").get(1).header("X-Outbox-Message-Id"));

    viewer()
        .get("/reconciliation/report")
        .then()
        .statusCode(200)
        .body("run_id", equalTo((int) runId));
    // ?source= names the database (the only one here is "default"); absent means the first.
    viewer()
        .queryParam("source", "default")
        .get("/reconciliation/report")
        .then()
        .statusCode(200)
        .body("run_id", equalTo((int) runId));
    JsonPath byId =
        viewer().get("/reconciliation/runs/" + runId).then().statusCode(200).extract().jsonPath();
    assertEquals(items(first), items(byId));
    assertEquals(first.getMap("counts"), byId.getMap("counts"));

    // Once the re-driven job is applied again, the next run matches it; the rest stays as it was.
    JsonPath second =
        operator()
            .contentType("application/json")
            .body(window(start, end))
            .post("/reconciliation/runs")
            .then()
            .statusCode(201)
            .extract()
            .jsonPath();
    assertTrue(second.getLong("run_id") > runId);
    assertEquals(counts(4, 0, 1, 1, 1), second.getMap("counts"));
    assertEquals(
        List.of("ghost-1", "dead-1", "twice-1"),
        second.getList("items.operation_id", String.class));
    assertEquals('C', job("lost-1").state());
    viewer()
        .get("/reconciliation/report")
        .then()
        .statusCode(200)
        .body("run_id", equalTo((int) second.getLong("run_id")));

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
                            "outbox_reconciliation_items{category=\"matched\",source=\"default\"} 4.0"))
                    .body(
                        containsString(
                            "outbox_reconciliation_items{category=\"confirmed_not_sent\",source=\"default\"} 1.0"))
                    .body(
                        containsString(
                            "outbox_reconciliation_items{category=\"sent_unconfirmed\",source=\"default\"} 0.0"))
                    .body(containsString("outbox_reconciliation_last_run_age_seconds")));
    double age = reconciliation.metrics().lastRunAgeSeconds();
    assertTrue(age >= 0 && age < 60, "last run age " + age);
  }

  @Test
  void withoutABodyTheRunCoversTheConfiguredWindowEndingNow() throws Exception {
    enqueue("ok-1");
    awaitState("ok-1", 'S');
    Instant before = admin.databaseNow();
    JsonPath run =
        operator().post("/reconciliation/runs").then().statusCode(201).extract().jsonPath();
    Instant end = Instant.parse(run.getString("window_end"));
    assertTrue(!end.isBefore(before), end + " is not before " + before);
    assertEquals(
        end.minus(reconciliation.settings().window()),
        Instant.parse(run.getString("window_start")));
    assertEquals(counts(1, 0, 0, 0, 0), run.getMap("counts"));
    assertEquals(List.of(), run.getList("items"));
  }

  @Test
  void badInputIsAProblemNamingTheFieldAndRunsNothing() {
    problem(operator().queryParam("source", "nope").post("/reconciliation/runs"), 400, "source");
    problem(viewer().queryParam("source", "nope").get("/reconciliation/report"), 400, "source");
    problem(
        operator().contentType("application/json").body("{not json").post("/reconciliation/runs"),
        400,
        "body");
    problem(
        operator().contentType("application/json").body("[1]").post("/reconciliation/runs"),
        400,
        "body");
    problem(
        operator()
            .contentType("application/json")
            .body("{\"window_start\":\"yesterday\"}")
            .post("/reconciliation/runs"),
        400,
        "window_start");
    problem(
        operator()
            .contentType("application/json")
            .body("{\"window_end\":12}")
            .post("/reconciliation/runs"),
        400,
        "window_end");
    problem(
        operator()
            .contentType("application/json")
            .body(
                window(
                    Instant.parse("2024-01-02T00:00:00Z"), Instant.parse("2024-01-01T00:00:00Z")))
            .post("/reconciliation/runs"),
        400,
        "window_end");
    problem(
        operator()
            .contentType("application/json")
            .body("{\"window_start\":\"2999-01-01T00:00:00Z\"}")
            .post("/reconciliation/runs"),
        400,
        "window_start");
    problem(
        operator()
            .contentType("application/json")
            .body("{\"window\":\"1h\"}")
            .post("/reconciliation/runs"),
        400,
        "window");
    problem(viewer().get("/reconciliation/runs/abc"), 400, "id");
    problem(viewer().get("/reconciliation/runs/987654321"), 404, "id");
    problem(viewer().get("/reconciliation/report"), 404, null);
    assertEquals(
        0L, count("SELECT COUNT(*) FROM outbox_reconciliation_run"), "nothing half-written");
  }

  /**
   * Issue 14: out-of-range instants were a 503 with an ERROR stack trace, a window_start far in the
   * past was accepted and echoed back as another instant; duplicate keys, unknown and repeated
   * query parameters, non-ASCII ids and non-JSON bodies follow the admin API's rules.
   */
  @Test
  void theSameInputRulesAsTheAdminApi() {
    problem(
        json("{\"window_end\":\"+999999999-12-31T23:59:59Z\"}").post("/reconciliation/runs"),
        400,
        "window_end");
    problem(
        json("{\"window_start\":\"-999999999-01-01T00:00:00Z\"}").post("/reconciliation/runs"),
        400,
        "window_start");
    JsonPath early =
        problem(
            json("{\"window_end\":\"1000-01-01T00:30:00Z\"}").post("/reconciliation/runs"),
            400,
            "window_end");
    assertTrue(early.getString("detail").contains("give window_start"), early.getString("detail"));
    JsonPath twice =
        problem(
            json("{\"window_end\":\"2024-01-01T00:00:00Z\",\"window_end\":\"2024-01-02T00:00:00Z\"}")
                .post("/reconciliation/runs"),
            400,
            "window_end");
    assertTrue(twice.getString("detail").contains("given twice"), twice.getString("detail"));
    problem(operator().queryParam("dry_run", "true").post("/reconciliation/runs"), 400, "dry_run");
    problem(
        operator().queryParam("source", "default", "default").post("/reconciliation/runs"),
        400,
        "source");
    problem(viewer().queryParam("verbose", "1").get("/reconciliation/report"), 400, "verbose");
    problem(viewer().queryParam("limit", "5", "6").get("/reconciliation/runs"), 400, "limit");
    problem(viewer().queryParam("limit", " 5").get("/reconciliation/runs"), 400, "limit");
    problem(viewer().queryParam("offset", "5").get("/reconciliation/runs"), 400, "offset");
    problem(viewer().queryParam("x", "1").get("/reconciliation/runs/1"), 400, "x");
    problem(viewer().urlEncodingEnabled(false).get("/reconciliation/runs/1%00"), 400, "id");
    problem(viewer().urlEncodingEnabled(false).get("/reconciliation/runs/%EF%BC%91"), 400, "id");
    operator()
        .contentType("application/xml")
        .body("{\"window_end\":\"2024-01-01T00:00:00Z\"}")
        .post("/reconciliation/runs")
        .then()
        .statusCode(415)
        .contentType(startsWith("application/problem+json"))
        .body("field", equalTo("Content-Type"));
    assertEquals(0L, count("SELECT COUNT(*) FROM outbox_reconciliation_run"), "nothing ran");
  }

  private io.restassured.specification.RequestSpecification json(String body) {
    return operator().contentType("application/json").body(body);
  }

  @Test
  void aLedgerThatCannotAnswerEndsTheRunWithoutAVerdictAndMovesNothing() throws Exception {
    enqueue("ok-1");
    awaitState("ok-1", 'S');
    receiver.ledgerStatus(503);
    JsonPath problem = problem(operator().post("/reconciliation/runs"), 502, null);
    long runId = problem.getLong("run_id");
    assertTrue(problem.getString("detail").contains("HTTP 503"), problem.getString("detail"));
    assertEquals('S', job("ok-1").state());
    JsonPath run =
        viewer().get("/reconciliation/runs/" + runId).then().statusCode(200).extract().jsonPath();
    assertTrue(
        run.getString("error").contains("ledger of destination 'ledgered'"),
        run.getString("error"));
    assertEquals(counts(0, 0, 0, 0, 0), run.getMap("counts"));
    assertEquals(List.of(), run.getList("items"));
  }

  @Test
  void aRunWhileAnotherRelayHoldsTheLeaseIsRefusedUntilTheLeaseExpires() {
    FleetLock other = JdbcFleetLock.create(ds);
    assertTrue(
        other.acquire(
            ReconciliationStore.RECONCILIATION_LOCK, "relay-elsewhere", Duration.ofMinutes(5)));
    JsonPath busy = problem(operator().post("/reconciliation/runs"), 409, null);
    assertTrue(busy.getString("detail").contains("relay-elsewhere"), busy.getString("detail"));
    assertEquals(0L, count("SELECT COUNT(*) FROM outbox_reconciliation_run"));
    // relay-elsewhere crashes; its lease runs out and this relay takes over.
    assertEquals(1L, count("SELECT COUNT(*) FROM outbox_lock WHERE name = 'reconciliation'"));
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.executeUpdate("UPDATE outbox_lock SET lease_until = now() - interval '1 second'");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    operator().post("/reconciliation/runs").then().statusCode(201);
    assertTrue(
        other.acquire(
            ReconciliationStore.RECONCILIATION_LOCK, "relay-elsewhere", Duration.ofMinutes(5)),
        "the relay released the lease after its run");
  }

  private JsonPath problem(io.restassured.response.Response r, int status, String field) {
    var then =
        r.then()
            .statusCode(status)
            .contentType(startsWith("application/problem+json"))
            .body("status", equalTo(status))
            .body(
                "title",
                equalTo(
                    jakarta.ws.rs.core.Response.Status.fromStatusCode(status).getReasonPhrase()));
    then = field == null ? then.body("field", nullValue()) : then.body("field", equalTo(field));
    return then.extract().jsonPath();
  }

  private long count(String sql) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  private static Map<String, Integer> counts(
      int matched, int unconfirmed, int notSent, int duplicates, int dead) {
    Map<String, Integer> m = new LinkedHashMap<>();
    m.put("matched", matched);
    m.put("sent_unconfirmed", unconfirmed);
    m.put("confirmed_not_sent", notSent);
    m.put("duplicate_effects", duplicates);
    m.put("dead", dead);
    return m;
  }

  private static Map<String, Object> item(
      String op,
      Long messageId,
      String state,
      String category,
      Instant sentAt,
      int confirmedCount,
      String lastError,
      String action) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("operation_id", op);
    m.put("message_id", messageId);
    m.put("destination", DEST);
    m.put("state", state);
    m.put("category", category);
    m.put("sent_at", sentAt);
    m.put("confirmed_count", confirmedCount);
    m.put("last_error", lastError);
    m.put("action", action);
    return m;
  }

  /** The report's items with message ids as longs and sent_at as instants, in report order. */
  private static List<Map<String, Object>> items(JsonPath report) {
    List<Map<String, Object>> raw = report.getList("items");
    return raw.stream()
        .map(
            i -> {
              Map<String, Object> m = new LinkedHashMap<>();
              m.put("operation_id", i.get("operation_id"));
              m.put(
                  "message_id",
                  i.get("message_id") == null ? null : ((Number) i.get("message_id")).longValue());
              m.put("destination", i.get("destination"));
              m.put("state", i.get("state"));
              m.put("category", i.get("category"));
              m.put(
                  "sent_at",
                  i.get("sent_at") == null ? null : Instant.parse((String) i.get("sent_at")));
              m.put("confirmed_count", i.get("confirmed_count"));
              m.put("last_error", i.get("last_error"));
              m.put("action", i.get("action"));
              assertEquals(9, i.size(), "item fields: " + i.keySet());
              return m;
            })
        .toList();
  }
}
