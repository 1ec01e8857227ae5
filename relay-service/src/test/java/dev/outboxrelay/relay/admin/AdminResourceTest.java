package dev.outboxrelay.relay.admin;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.matchesRegex;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.source.RelayInstance;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver.Response;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.ValidatableResponse;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The admin API over HTTP against the running relay, real PostgreSQL and a real HTTP receiver. Jobs
 * reach their states the way they do in production (a scheduled job stays R, a job the receiver
 * answers 422 ends D with its attempt), except the W job of the cancel test, which is leased by
 * hand for an hour so no relay touches it. Users: see application.properties, %test.
 */
@QuarkusTest
@QuarkusTestResource(RelayTestResources.class)
class AdminResourceTest {
  static final Duration WAIT = Duration.ofSeconds(30);
  static final String PROBLEM = "application/problem+json";

  @Inject
  @io.quarkus.agroal.DataSource("postgresql")
  AgroalDataSource ds;

  @Inject RelayService relay;

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

  // ---- authentication and roles ----------------------------------------------------------------

  @Test
  void withoutCredentialsIs401WithABasicChallenge() {
    given()
        .get("/admin/messages")
        .then()
        .statusCode(401)
        .header("WWW-Authenticate", matchesRegex("(?i)basic.*"));
    given().get("/admin/stats").then().statusCode(401);
    given().post("/admin/messages/1/replay").then().statusCode(401);
    given().get("/admin/no-such-page").then().statusCode(401);
  }

  @Test
  void aWrongPasswordOrUnknownUserIs401() {
    given()
        .auth()
        .preemptive()
        .basic("operator", "not-the-password")
        .get("/admin/stats")
        .then()
        .statusCode(401);
    given()
        .auth()
        .preemptive()
        .basic("mallory", "operator-pw")
        .get("/admin/stats")
        .then()
        .statusCode(401);
  }

  @Test
  void aViewerReadsButCannotActAndAUserWithoutRoleCannotRead() throws Exception {
    long dead = deadVia422("billing", null);
    viewer().get("/admin/messages").then().statusCode(200);
    viewer().get("/admin/messages/" + dead).then().statusCode(200);
    viewer().get("/admin/stats").then().statusCode(200);
    viewer().post("/admin/messages/" + dead + "/replay").then().statusCode(403);
    viewer().post("/admin/messages/" + dead + "/cancel").then().statusCode(403);
    viewer().body("{\"all\":true}").post("/admin/messages/replay").then().statusCode(403);
    assertEquals('D', state(dead), "a refused action changed nothing");

    nobody().get("/admin/messages").then().statusCode(403);
    nobody().get("/admin/stats").then().statusCode(403);
    operator().get("/admin/messages").then().statusCode(200);
    operator().get("/admin/stats").then().statusCode(200);
  }

  @Test
  void healthAndMetricsStayOpen() {
    given().get("/q/health/live").then().statusCode(200);
    given().get("/q/metrics").then().statusCode(200);
  }

  // ---- listing
  // -----------------------------------------------------------------------------------

  @Test
  void listingFiltersByStateDestinationAndKeyAndPagesById() throws Exception {
    // The dead job first: a scheduled job of its key would hold it back (FIFO per key).
    long d1 = deadVia422("billing", "k1");
    long r1 = scheduled("billing", "k1");
    long r2 = scheduled("billing", "k2");
    long d2 = deadUnknownDestination();
    long r3 = scheduled("signed", "k1");

    operator()
        .get("/admin/messages")
        .then()
        .statusCode(200)
        .body("messages.id", equalTo(longs(d1, r1, r2, d2, r3)))
        .body("limit", equalTo(50))
        .body("next_after_id", nullValue());
    viewer()
        .queryParam("state", "D")
        .get("/admin/messages")
        .then()
        .statusCode(200)
        .body("messages.id", equalTo(longs(d1, d2)))
        .body("messages[0].state", equalTo("D"))
        .body("messages[0].error_class", equalTo("HTTP 422"))
        .body("messages[0].operation_id", startsWith("op-"))
        .body("messages[1].error_class", equalTo("UnknownDestination"))
        .body("messages[0]", not(org.hamcrest.Matchers.hasKey("payload")));
    viewer()
        .queryParam("state", "r")
        .queryParam("destination", "billing")
        .get("/admin/messages")
        .then()
        .statusCode(200)
        .body("messages.id", equalTo(longs(r1, r2)));
    viewer()
        .queryParam("ordering_key", "k1")
        .get("/admin/messages")
        .then()
        .statusCode(200)
        .body("messages.id", equalTo(longs(d1, r1, r3)));
    viewer()
        .queryParam("state", "")
        .queryParam("destination", "")
        .get("/admin/messages")
        .then()
        .statusCode(200)
        .body("messages.id", equalTo(longs(d1, r1, r2, d2, r3)));

    List<Long> paged = new ArrayList<>();
    Long after = 0L;
    int pages = 0;
    while (after != null) {
      ValidatableResponse page =
          viewer()
              .queryParam("limit", 2)
              .queryParam("after_id", after)
              .get("/admin/messages")
              .then()
              .statusCode(200)
              .body("limit", equalTo(2));
      List<Number> ids = page.extract().jsonPath().getList("messages.id", Number.class);
      ids.forEach(id -> paged.add(id.longValue()));
      Number next = page.extract().jsonPath().get("next_after_id");
      after = next == null ? null : next.longValue();
      pages++;
    }
    assertEquals(List.of(d1, r1, r2, d2, r3), paged);
    assertEquals(3, pages, "2 + 2 + 1");
  }

  // ---- detail
  // ------------------------------------------------------------------------------------

  @Test
  void detailShowsTheJobAndItsAttemptsWithCredentialHeadersRedacted() throws Exception {
    String op = "op-" + UUID.randomUUID();
    receiver.script(
        op, Response.status(500), new Response(422, Map.of(), "{\"error\":\"amount missing\"}", 0));
    long id;
    try (Connection c = ds.getConnection()) {
      id =
          outbox
              .enqueue(
                  c,
                  OutboxMessage.builder()
                      .operationId(op)
                      .destination("billing")
                      .orderingKey("cust-1")
                      .payload("{\"amount\":null}")
                      .header("X-Trace", "trace-1")
                      .header("Authorization", "Bearer s3cr3t")
                      .build())
              .messageId();
    }
    awaitState(id, 'D');

    String body =
        viewer()
            .get("/admin/messages/" + id)
            .then()
            .statusCode(200)
            .body("message.id", equalTo((int) id))
            .body("message.operation_id", equalTo(op))
            .body("message.destination", equalTo("billing"))
            .body("message.ordering_key", equalTo("cust-1"))
            .body("message.state", equalTo("D"))
            .body("message.attempts", equalTo(2))
            .body("message.last_error", containsString("422"))
            .body("message.payload", equalTo("{\"amount\":null}"))
            .body("message.payload_by_reference", equalTo(false))
            .body("message.headers.X-Trace", equalTo("trace-1"))
            .body("message.headers.Authorization", equalTo(AdminService.REDACTED))
            .body("attempts.outcome", equalTo(List.of("RETRY", "DEAD")))
            .body("attempts.attempt_no", equalTo(List.of(1, 2)))
            .body("attempts.error_class", equalTo(List.of("HTTP 500", "HTTP 422")))
            .body("attempts[1].response_summary", containsString("amount missing"))
            .body(
                "attempts.relay_instance", equalTo(List.of(RelayInstance.NAME, RelayInstance.NAME)))
            .extract()
            .asString();
    assertTrue(!body.contains("s3cr3t"), body);

    operator()
        .get("/admin/messages/" + (id + 1000))
        .then()
        .statusCode(404)
        .contentType(PROBLEM)
        .body("status", equalTo(404))
        .body("field", equalTo("id"))
        .body("detail", containsString("no message with id " + (id + 1000)));
  }

  @Test
  void noDestinationSecretAppearsInTheAdminApi() throws Exception {
    receiver.requireSignature(
        "/signed", "not-the-relays-secret".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    long id = enqueue("signed", null, Duration.ZERO);
    awaitState(id, 'D');
    for (String path : List.of("/admin/messages", "/admin/messages/" + id, "/admin/stats")) {
      String body = operator().get(path).then().statusCode(200).extract().asString();
      assertTrue(!body.contains(RelayTestResources.SIGNED_SECRET), path + ": " + body);
    }
  }

  // ---- replay and cancel
  // -------------------------------------------------------------------------

  @Test
  void replayOfADeadJobMakesItReadyAndTheRelayDeliversIt() throws Exception {
    long id = deadVia422("billing", null);
    double before = adminActions("replay");

    operator()
        .post("/admin/messages/" + id + "/replay")
        .then()
        .statusCode(200)
        .body("id", equalTo((int) id))
        .body("action", equalTo("replay"))
        .body("previous_state", equalTo("D"))
        .body("state", equalTo("R"))
        .body("by", equalTo("operator"));

    StoredJob m = awaitState(id, 'S');
    assertEquals(
        1, m.attempts(), "a fresh attempt budget: the replayed delivery is attempt 1 again");
    assertEquals(2, receiver.requestsFor(m.operationId()).size());
    assertEquals(before + 1, adminActions("replay"));
  }

  @Test
  void replayOfAJobThatIsNotDeadIs409AndUnknownIs404() throws Exception {
    long ready = scheduled("billing", null);
    operator()
        .post("/admin/messages/" + ready + "/replay")
        .then()
        .statusCode(409)
        .contentType(PROBLEM)
        .body("status", equalTo(409))
        .body("title", equalTo("Conflict"))
        .body("field", equalTo("state"))
        .body("detail", containsString("is R (ready), not D (dead)"));
    assertEquals('R', state(ready));
    long sent = enqueue("billing", null, Duration.ZERO);
    awaitState(sent, 'S');
    operator()
        .post("/admin/messages/" + sent + "/replay")
        .then()
        .statusCode(409)
        .body("detail", containsString("is S (sent)"));
    assertEquals('S', state(sent));
    operator()
        .post("/admin/messages/" + (sent + 1000) + "/replay")
        .then()
        .statusCode(404)
        .contentType(PROBLEM)
        .body("field", equalTo("id"));
  }

  @Test
  void cancelOfAReadyJobMakesItDeadRecordingWhoAndWhy() throws Exception {
    long id = scheduled("billing", "cust-5");
    double before = adminActions("cancel");

    operator()
        .contentType("application/json")
        .body("{\"reason\":\"customer withdrew the order\"}")
        .post("/admin/messages/" + id + "/cancel")
        .then()
        .statusCode(200)
        .body("action", equalTo("cancel"))
        .body("previous_state", equalTo("R"))
        .body("state", equalTo("D"));

    viewer()
        .get("/admin/messages/" + id)
        .then()
        .statusCode(200)
        .body("message.state", equalTo("D"))
        .body(
            "message.last_error",
            equalTo("cancelled by operator via the admin API: customer withdrew the order"))
        .body("attempts.outcome", equalTo(List.of("CANCELLED")))
        .body("attempts[0].error_class", equalTo("Cancelled"))
        .body("attempts[0].relay_instance", nullValue());
    assertEquals(before + 1, adminActions("cancel"));
    viewer()
        .get("/admin/stats")
        .then()
        .statusCode(200)
        .body("dead_ordering_keys.ordering_key", hasItem("cust-5"));

    long other = scheduled("billing", null);
    operator().post("/admin/messages/" + other + "/cancel").then().statusCode(200);
    assertEquals(
        "cancelled by operator via the admin API", admin.findJob(other).orElseThrow().lastError());
  }

  @Test
  void cancelOfAJobInFlightIs409ExplainingWhyAndChangesNothing() throws Exception {
    long id = scheduled("billing", null);
    UUID token = UUID.randomUUID();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE outbox_message SET state = 'W', claim_token = ?, claimed_at = now(),"
                    + " lease_until = now() + interval '1 hour' WHERE id = ?")) {
      ps.setObject(1, token);
      ps.setLong(2, id);
      assertEquals(1, ps.executeUpdate());
    }

    operator()
        .post("/admin/messages/" + id + "/cancel")
        .then()
        .statusCode(409)
        .contentType(PROBLEM)
        .body("field", equalTo("state"))
        .body("detail", containsString("is W (working): a relay is delivering it right now"));

    StoredJob m = admin.findJob(id).orElseThrow();
    assertEquals('W', m.state());
    assertEquals(token, m.claimToken());
    assertEquals(List.of(), admin.attempts(id));

    long sent = enqueue("billing", null, Duration.ZERO);
    awaitState(sent, 'S');
    operator()
        .post("/admin/messages/" + sent + "/cancel")
        .then()
        .statusCode(409)
        .body("detail", containsString("is S (sent), not R (ready)"));
    operator()
        .post("/admin/messages/" + (sent + 1000) + "/cancel")
        .then()
        .statusCode(404)
        .body("field", equalTo("id"));
  }

  // ---- bulk replay
  // -------------------------------------------------------------------------------

  @Test
  void bulkReplayDryRunCountsWhatTheRealRunReplaysAndOnlyMatchingDeadJobsChange() throws Exception {
    List<Long> match = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      match.add(deadVia422("billing", null));
    }
    match.add(deadVia422("billing", "k9"));
    long other400 = deadVia("billing", null, 400);
    long unknown = deadUnknownDestination();
    long ready = scheduled("billing", null);
    String filter = "{\"destination\":\"billing\",\"error_class\":\"HTTP 422\"";

    int dryRun =
        operator()
            .contentType("application/json")
            .body(filter + "}")
            .post("/admin/messages/replay")
            .then()
            .statusCode(200)
            .body("dry_run", equalTo(true))
            .body("matched", equalTo(4))
            .body("limit", equalTo(1000))
            .body("$", not(org.hamcrest.Matchers.hasKey("replayed")))
            .extract()
            .path("matched");
    for (long id : match) {
      assertEquals('D', state(id), "a dry run changes nothing");
    }
    operator()
        .contentType("application/json")
        .body("{\"ordering_key\":\"k9\"}")
        .post("/admin/messages/replay")
        .then()
        .statusCode(200)
        .body("matched", equalTo(1));
    operator()
        .contentType("application/json")
        .body("{\"destination\":\"billing\",\"dead_from\":\"2999-01-01T00:00:00Z\"}")
        .post("/admin/messages/replay")
        .then()
        .statusCode(200)
        .body("matched", equalTo(0));
    operator()
        .contentType("application/json")
        .body("{\"all\":true}")
        .post("/admin/messages/replay")
        .then()
        .statusCode(200)
        .body("matched", equalTo(6));

    double before = adminActions("bulk_replay");
    operator()
        .contentType("application/json")
        .body(filter + ",\"dry_run\":false}")
        .post("/admin/messages/replay")
        .then()
        .statusCode(200)
        .body("dry_run", equalTo(false))
        .body("replayed", equalTo(dryRun))
        .body("by", equalTo("operator"));

    for (long id : match) {
      awaitState(id, 'S');
    }
    assertEquals('D', state(other400));
    assertEquals('D', state(unknown));
    assertEquals('R', state(ready));
    assertEquals(before + 1, adminActions("bulk_replay"));
    operator()
        .contentType("application/json")
        .body(filter + ",\"dry_run\":false}")
        .post("/admin/messages/replay")
        .then()
        .statusCode(200)
        .body("replayed", equalTo(0));
  }

  @Test
  void bulkReplayHonoursItsLimit() throws Exception {
    long a = deadUnknownDestination();
    long b = deadUnknownDestination();
    operator()
        .contentType("application/json")
        .body("{\"error_class\":\"UnknownDestination\",\"dry_run\":false,\"limit\":1}")
        .post("/admin/messages/replay")
        .then()
        .statusCode(200)
        .body("matched", equalTo(2))
        .body("replayed", equalTo(1))
        .body("limit", equalTo(1));
    // The replayed one (lowest id) is tried again and dies again: unknown destination is permanent.
    Awaitility.await().atMost(WAIT).until(() -> admin.attempts(a).size() == 2);
    assertEquals(1, admin.attempts(b).size());
  }

  // ---- stats
  // -------------------------------------------------------------------------------------

  @Test
  void statsCountStatesDestinationsErrorClassesAndKeysWithDeadJobs() throws Exception {
    long first = deadVia422("billing", "cust-1");
    deadVia422("billing", "cust-1");
    deadVia422("billing", "cust-2");
    deadUnknownDestination();
    scheduled("billing", "cust-1");
    long sent = enqueue("billing", "cust-3", Duration.ZERO);
    awaitState(sent, 'S');

    viewer()
        .get("/admin/stats")
        .then()
        .statusCode(200)
        .body("by_state.R", equalTo(1))
        .body("by_state.D", equalTo(4))
        .body("by_state.S", equalTo(1))
        .body("by_state.W", equalTo(0))
        .body("by_state.C", equalTo(0))
        .body("by_destination.billing.D", equalTo(3))
        .body("by_destination.billing.R", equalTo(1))
        .body("by_destination.nowhere.D", equalTo(1))
        .body("dead_by_error_class[0].error_class", equalTo("HTTP 422"))
        .body("dead_by_error_class[0].count", equalTo(3))
        .body("dead_by_error_class[1].error_class", equalTo("UnknownDestination"))
        .body("dead_ordering_keys.ordering_key", equalTo(List.of("cust-1", "cust-2")))
        .body("dead_ordering_keys[0].dead_count", equalTo(2))
        .body("dead_ordering_keys[0].first_dead_id", equalTo((int) first))
        .body("dead_ordering_keys_truncated", equalTo(false))
        .body("oldest_ready_age_seconds", org.hamcrest.Matchers.notNullValue());
  }

  // ---- bad input: 400 problem bodies naming the field
  // --------------------------------------------

  @Test
  void badListingParametersAre400NamingTheParameter() {
    badRequest(viewer().queryParam("limit", "abc").get("/admin/messages"), "limit", "integer");
    badRequest(viewer().queryParam("limit", "0").get("/admin/messages"), "limit", "from 1 to 500");
    badRequest(viewer().queryParam("limit", "-5").get("/admin/messages"), "limit", "from 1 to 500");
    badRequest(
        viewer().queryParam("limit", "501").get("/admin/messages"), "limit", "from 1 to 500");
    badRequest(
        viewer().queryParam("limit", "99999999999999999999").get("/admin/messages"),
        "limit",
        "integer");
    badRequest(viewer().queryParam("after_id", "-1").get("/admin/messages"), "after_id", "from 0");
    badRequest(viewer().queryParam("after_id", "x1").get("/admin/messages"), "after_id", "integer");
    badRequest(
        viewer().queryParam("state", "X").get("/admin/messages"), "state", "unknown state 'X'");
    badRequest(
        viewer().queryParam("state", "READY").get("/admin/messages"), "state", "unknown state");
    badRequest(
        viewer().queryParam("stat", "D").get("/admin/messages"), "stat", "unknown query parameter");
    badRequest(
        viewer().queryParam("state", "D", "R").get("/admin/messages"), "state", "given 2 times");
    badRequest(
        viewer().queryParam("destination", "x".repeat(201)).get("/admin/messages"),
        "destination",
        "longer than 200");
  }

  /**
   * Every admin endpoint takes ?source=; the only source here is "default", the one used without
   * it.
   */
  @Test
  void sourceSelectsTheDatabase() {
    viewer().queryParam("source", "default").get("/admin/messages").then().statusCode(200);
    viewer().queryParam("source", "default").get("/admin/stats").then().statusCode(200);
    badRequest(
        viewer().queryParam("source", "nope").get("/admin/messages"),
        "source",
        "unknown source 'nope'; sources: [default]");
    badRequest(
        viewer().queryParam("source", "nope").get("/admin/stats"), "source", "unknown source");
  }

  @Test
  void badIdsAre400NamingTheId() {
    badRequest(viewer().get("/admin/messages/abc"), "id", "integer");
    badRequest(viewer().get("/admin/messages/0"), "id", "from 1");
    badRequest(viewer().get("/admin/messages/-3"), "id", "from 1");
    badRequest(viewer().get("/admin/messages/99999999999999999999"), "id", "integer");
    badRequest(viewer().get("/admin/messages/1.5"), "id", "integer");
    badRequest(operator().post("/admin/messages/abc/replay"), "id", "integer");
    badRequest(operator().post("/admin/messages/abc/cancel"), "id", "integer");
  }

  @Test
  void badCancelBodiesAre400NamingTheField() throws Exception {
    long id = scheduled("billing", null);
    badRequest(
        json(operator(), "{\"reason\":").post("/admin/messages/" + id + "/cancel"),
        "body",
        "not valid JSON");
    badRequest(
        json(operator(), "[\"why\"]").post("/admin/messages/" + id + "/cancel"),
        "body",
        "JSON object");
    badRequest(
        json(operator(), "{\"reason\":5}").post("/admin/messages/" + id + "/cancel"),
        "reason",
        "string");
    badRequest(
        json(operator(), "{\"why\":\"x\"}").post("/admin/messages/" + id + "/cancel"),
        "why",
        "unknown property");
    badRequest(
        json(operator(), "{\"reason\":\"" + "r".repeat(501) + "\"}")
            .post("/admin/messages/" + id + "/cancel"),
        "reason",
        "longer than 500");
    badRequest(
        json(operator(), "{\"reason\":\"two\\nlines\"}").post("/admin/messages/" + id + "/cancel"),
        "reason",
        "control characters");
    assertEquals('R', state(id), "nothing of a refused cancel was written");
    assertEquals(List.of(), admin.attempts(id));
  }

  @Test
  void badBulkReplayBodiesAre400NamingTheFieldAndReplayNothing() throws Exception {
    long dead = deadUnknownDestination();
    String path = "/admin/messages/replay";
    badRequest(operator().post(path), "body", "JSON object is required");
    badRequest(json(operator(), "{\"destination\":").post(path), "body", "not valid JSON");
    badRequest(json(operator(), "\"billing\"").post(path), "body", "JSON object");
    badRequest(json(operator(), "{}").post(path), "all", "filter is empty");
    badRequest(json(operator(), "{\"dry_run\":false}").post(path), "all", "filter is empty");
    badRequest(
        json(operator(), "{\"all\":false,\"dry_run\":false}").post(path), "all", "filter is empty");
    badRequest(
        json(operator(), "{\"all\":true,\"destination\":\"nowhere\"}").post(path),
        "all",
        "cannot be combined");
    badRequest(
        json(operator(), "{\"destinaton\":\"nowhere\",\"dry_run\":false}").post(path),
        "destinaton",
        "unknown property");
    badRequest(
        json(operator(), "{\"destination\":5}").post(path), "destination", "must be a string");
    badRequest(
        json(operator(), "{\"destination\":\"\"}").post(path), "destination", "must not be empty");
    badRequest(
        json(operator(), "{\"error_class\":[\"HTTP 422\"]}").post(path),
        "error_class",
        "must be a string");
    badRequest(
        json(operator(), "{\"all\":true,\"dry_run\":\"no\"}").post(path),
        "dry_run",
        "true or false");
    badRequest(json(operator(), "{\"all\":\"yes\"}").post(path), "all", "true or false");
    badRequest(
        json(operator(), "{\"all\":true,\"limit\":-1}").post(path), "limit", "from 1 to 10000");
    badRequest(
        json(operator(), "{\"all\":true,\"limit\":0}").post(path), "limit", "from 1 to 10000");
    badRequest(
        json(operator(), "{\"all\":true,\"limit\":10001}").post(path), "limit", "from 1 to 10000");
    badRequest(json(operator(), "{\"all\":true,\"limit\":1.5}").post(path), "limit", "integer");
    badRequest(json(operator(), "{\"all\":true,\"limit\":\"10\"}").post(path), "limit", "integer");
    badRequest(json(operator(), "{\"all\":true,\"limit\":1e40}").post(path), "limit", "integer");
    badRequest(
        json(operator(), "{\"dead_from\":\"yesterday\"}").post(path), "dead_from", "ISO-8601");
    badRequest(
        json(operator(), "{\"dead_to\":\"2024-05-01T12:00:00\"}").post(path),
        "dead_to",
        "ISO-8601");
    badRequest(
        json(
                operator(),
                "{\"dead_from\":\"2024-05-02T00:00:00Z\",\"dead_to\":\"2024-05-01T00:00:00+02:00\"}")
            .post(path),
        "dead_to",
        "must be after dead_from");
    badRequest(
        json(operator(), "{\"destination\":\"a\",\"destination\":\"b\"}").post(path),
        "destination",
        "property 'destination' is given twice");
    badRequest(
        json(operator(), "{\"all\":true} {\"all\":true}").post(path), "body", "not valid JSON");
    assertEquals('D', state(dead), "nothing was replayed by a refused request");
  }

  /** Issue 14: a NUL, a blank or a fullwidth digit used to read as message 1. */
  @Test
  void idsAreAsciiDigitsOnly() throws Exception {
    long id = scheduled("billing", null);
    viewer().get("/admin/messages/" + id).then().statusCode(200);
    for (String raw :
        List.of(id + "%00", "%EF%BC%91", "%20" + id, id + "%20", "+" + id, "0x1", "%D9%A1")) {
      badRequest(
          viewer().urlEncodingEnabled(false).get("/admin/messages/" + raw), "id", "ASCII digits");
    }
    badRequest(
        operator().urlEncodingEnabled(false).post("/admin/messages/" + id + "%00/cancel"),
        "id",
        "ASCII digits");
    badRequest(
        viewer().urlEncodingEnabled(false).queryParam("limit", "%EF%BC%95").get("/admin/messages"),
        "limit",
        "ASCII digits");
    assertEquals('R', state(id));
  }

  /** One rule on every endpoint: an unknown or repeated query parameter is refused, naming it. */
  @Test
  void everyEndpointRefusesUnknownAndRepeatedQueryParameters() throws Exception {
    long id = scheduled("billing", null);
    badRequest(
        viewer().queryParam("verbose", "1").get("/admin/stats"),
        "verbose",
        "unknown query parameter");
    badRequest(
        viewer().queryParam("source", "default", "default").get("/admin/stats"),
        "source",
        "given 2 times");
    badRequest(
        viewer().queryParam("state", "R").get("/admin/messages/" + id),
        "state",
        "unknown query parameter");
    badRequest(
        operator().queryParam("force", "true").post("/admin/messages/" + id + "/cancel"),
        "force",
        "unknown query parameter");
    badRequest(
        operator().queryParam("dry_run", "false").post("/admin/messages/" + id + "/replay"),
        "dry_run",
        "unknown query parameter");
    badRequest(
        json(operator(), "{\"all\":true}")
            .queryParam("dry_run", "false")
            .post("/admin/messages/replay"),
        "dry_run",
        "unknown query parameter");
    assertEquals('R', state(id), "nothing of a refused request was done");
  }

  /** Issue 14: a cancel sent as XML went through. A body is JSON, or the request is a 415. */
  @Test
  void aBodyThatIsNotJsonIs415AndChangesNothing() throws Exception {
    long id = scheduled("billing", null);
    for (String type :
        List.of("application/xml", "text/plain", "application/x-www-form-urlencoded")) {
      operator()
          .contentType(type)
          .body("{\"reason\":\"why\"}")
          .post("/admin/messages/" + id + "/cancel")
          .then()
          .statusCode(415)
          .contentType(PROBLEM)
          .body("status", equalTo(415))
          .body("field", equalTo("Content-Type"))
          .body("detail", containsString("application/json"));
    }
    operator()
        .contentType("text/plain")
        .body("{\"all\":true,\"dry_run\":false}")
        .post("/admin/messages/replay")
        .then()
        .statusCode(415)
        .contentType(PROBLEM);
    assertEquals('R', state(id));
    operator()
        .contentType("application/json; charset=utf-8")
        .body("{\"reason\":\"ok\"}")
        .post("/admin/messages/" + id + "/cancel")
        .then()
        .statusCode(200);
    assertEquals('D', state(id), "JSON with a charset is JSON");
  }

  /**
   * Issue 14: out-of-range instants were a 503 "try again" with an ERROR stack trace per request.
   */
  @Test
  void instantsOutsideWhatTheDatabasesStoreAre400() throws Exception {
    long dead = deadUnknownDestination();
    String path = "/admin/messages/replay";
    badRequest(
        json(operator(), "{\"dead_from\":\"+999999999-12-31T23:59:59Z\"}").post(path),
        "dead_from",
        "out of range");
    badRequest(
        json(operator(), "{\"dead_to\":\"-999999999-01-01T00:00:00Z\"}").post(path),
        "dead_to",
        "out of range");
    badRequest(
        json(operator(), "{\"dead_from\":\"0999-12-31T23:59:59Z\",\"dry_run\":false}").post(path),
        "dead_from",
        "from 1000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z");
    operator()
        .contentType("application/json")
        .body("{\"dead_from\":\"1000-01-01T00:00:00Z\",\"dead_to\":" + "\"9999-12-31T23:59:59Z\"}")
        .post(path)
        .then()
        .statusCode(200)
        .body("matched", equalTo(1));
    assertEquals('D', state(dead));
  }

  /** 413 and 414 come before any resource; they are problems like every other refusal. */
  @Test
  void tooLargeBodiesAndTooLongUrisAreProblems() {
    String big = "{\"reason\":\"" + "x".repeat(11 * 1024 * 1024) + "\"}";
    // As curl sends a large body: the answer comes before the body, which is then never sent.
    json(operator(), big)
        .header("Expect", "100-continue")
        .post("/admin/messages/1/cancel")
        .then()
        .statusCode(413)
        .contentType(PROBLEM)
        .body("status", equalTo(413))
        .body("field", equalTo("body"))
        .body("detail", containsString("quarkus.http.limits.max-body-size"));
    viewer()
        .queryParam("destination", "d".repeat(9_000))
        .get("/admin/messages")
        .then()
        .statusCode(414)
        .contentType(PROBLEM)
        .body("status", equalTo(414))
        .body("detail", containsString("4096"));
    viewer().get("/admin/stats").then().statusCode(200);
  }

  @Test
  void unknownAdminPathsAndWrongMethodsAnswerProblemsNotPages() {
    operator()
        .get("/admin/messages/1/nothing-here")
        .then()
        .statusCode(404)
        .contentType(PROBLEM)
        .body("status", equalTo(404));
    operator()
        .delete("/admin/messages/1")
        .then()
        .statusCode(405)
        .contentType(PROBLEM)
        .body("status", equalTo(405));
  }

  // ---- helpers
  // -----------------------------------------------------------------------------------

  static RequestSpecification viewer() {
    return given().auth().preemptive().basic("viewer", "viewer-pw");
  }

  static RequestSpecification operator() {
    return given().auth().preemptive().basic("operator", "operator-pw");
  }

  static RequestSpecification nobody() {
    return given().auth().preemptive().basic("nobody", "nobody-pw");
  }

  static RequestSpecification json(RequestSpecification spec, String body) {
    return spec.contentType("application/json").body(body);
  }

  static void badRequest(io.restassured.response.Response r, String field, String detailPart) {
    r.then()
        .statusCode(400)
        .contentType(PROBLEM)
        .body("type", equalTo("about:blank"))
        .body("title", equalTo("Bad Request"))
        .body("status", equalTo(400))
        .body("field", equalTo(field))
        .body("detail", containsString(detailPart));
  }

  static List<Integer> longs(long... ids) {
    List<Integer> list = new ArrayList<>();
    for (long id : ids) {
      list.add((int) id);
    }
    return list;
  }

  double adminActions(String action) {
    String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
    String prefix = "outbox_admin_actions_total{action=\"" + action + "\"} ";
    return metrics
        .lines()
        .filter(l -> l.startsWith(prefix))
        .map(l -> Double.parseDouble(l.substring(prefix.length())))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + prefix + "in /q/metrics"));
  }

  long enqueue(String destination, String orderingKey, Duration delay) throws SQLException {
    OutboxMessage.Builder b =
        OutboxMessage.builder()
            .operationId("op-" + UUID.randomUUID())
            .destination(destination)
            .payload("{}")
            .deliverAfter(delay);
    if (orderingKey != null) {
      b.orderingKey(orderingKey);
    }
    try (Connection c = ds.getConnection()) {
      return outbox.enqueue(c, b.build()).messageId();
    }
  }

  /** A ready job the relay will not claim during the test (due in an hour). */
  long scheduled(String destination, String orderingKey) throws SQLException {
    return enqueue(destination, orderingKey, Duration.ofHours(1));
  }

  long deadVia422(String destination, String orderingKey) throws SQLException {
    return deadVia(destination, orderingKey, 422);
  }

  /**
   * A job the receiver refuses once with {@code status} (permanent), so it ends D; later sends
   * succeed.
   */
  long deadVia(String destination, String orderingKey, int status) throws SQLException {
    String op = "op-" + UUID.randomUUID();
    receiver.script(op, Response.status(status));
    OutboxMessage.Builder b =
        OutboxMessage.builder().operationId(op).destination(destination).payload("{}");
    if (orderingKey != null) {
      b.orderingKey(orderingKey);
    }
    long id;
    try (Connection c = ds.getConnection()) {
      id = outbox.enqueue(c, b.build()).messageId();
    }
    awaitState(id, 'D');
    return id;
  }

  long deadUnknownDestination() throws SQLException {
    long id = enqueue("nowhere", null, Duration.ZERO);
    awaitState(id, 'D');
    return id;
  }

  StoredJob awaitState(long id, char state) {
    Awaitility.await().atMost(WAIT).until(() -> admin.findJob(id).orElseThrow().state() == state);
    return admin.findJob(id).orElseThrow();
  }

  char state(long id) {
    return admin.findJob(id).orElseThrow().state();
  }
}
