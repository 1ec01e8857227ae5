package dev.outboxrelay.demo.e2e;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import io.restassured.path.json.JsonPath;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The demo flow through both packaged services as real processes sharing one H2 database in server
 * mode, exactly as bin/demo runs them: orders in through demo-orders' REST API, jobs out through
 * the relay to the demo sink, checked at the sink's ledger and the relay's metrics. Deliveries are
 * signed: both services get one generated HMAC secret through the environment, as in bin/demo, and
 * the sink rejects any delivery without a valid signature. The relay reconciles the billing
 * destination against the sink's {@code GET /ledger}, as in bin/demo: a run on demand moves every
 * delivered job to confirmed ({@code C}).
 */
class DemoFlowIT {
  static final int ORDERS = 30;
  static DemoStack stack;
  static ServiceProcess demo;
  static ServiceProcess relay;
  static String secret;
  static final String ADMIN_PASSWORD = "demo-" + System.nanoTime();

  @BeforeAll
  static void startServices() throws Exception {
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    secret = HexFormat.of().formatHex(random);
    stack =
        DemoStack.start(
            "demo-flow-it",
            new DemoStack.Settings(Map.of(), Map.of("DEMO_SINK_HMAC_SECRET", secret)),
            demoUri ->
                new DemoStack.Settings(
                    Map.of(
                        "outbox.destinations.billing.confirmation.type",
                        "http-ledger",
                        "outbox.destinations.billing.confirmation.url",
                        demoUri + "/ledger",
                        // An operator login, as bin/demo makes one: the relay has no users by
                        // default.
                        "quarkus.security.users.embedded.users.demo",
                        sha512Hex("demo:Quarkus:" + ADMIN_PASSWORD),
                        "quarkus.security.users.embedded.roles.demo",
                        "outbox-operator"),
                    Map.of("OUTBOX_DESTINATIONS_BILLING_HMAC_SECRET", secret)));
    demo = stack.demo;
    relay = stack.relay;
  }

  @AfterAll
  static void stopServices() throws Exception {
    if (stack != null) {
      stack.close();
    }
  }

  @Test
  void ordersReachTheSinkOnceAndTheRelayShutsDownCleanly() throws Exception {
    Set<String> operationIds = new HashSet<>();
    for (int i = 1; i <= ORDERS; i++) {
      String op =
          given()
              .baseUri(demo.baseUri().toString())
              .contentType("application/json")
              .body("{\"customer\":\"c-" + i + "\",\"amountCents\":" + (100 + i) + "}")
              .post("/orders")
              .then()
              .statusCode(201)
              .body("operationId", startsWith("order-"))
              .extract()
              .path("operationId");
      operationIds.add(op);
    }
    given()
        .baseUri(demo.baseUri().toString())
        .contentType("application/json")
        .body("{\"customer\":\"bad\",\"amountCents\":0}")
        .post("/orders")
        .then()
        .statusCode(400)
        .body("field", equalTo("amountCents"));

    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () ->
                given()
                    .baseUri(demo.baseUri().toString())
                    .get("/demo/report")
                    .then()
                    .statusCode(200)
                    .body("outbox.S", equalTo(ORDERS)));

    JsonPath report = given().baseUri(demo.baseUri().toString()).get("/demo/report").jsonPath();
    assertEquals(ORDERS, report.getInt("orders"), "the rejected order committed nothing");
    assertEquals(ORDERS, report.getInt("applied"));
    assertEquals(0, report.getInt("lost"));
    assertEquals(0, report.getInt("duplicates"));

    List<Map<String, Object>> ledger =
        given()
            .baseUri(demo.baseUri().toString())
            .queryParam("limit", 1000)
            .get("/ledger")
            .jsonPath()
            .getList("items");
    Set<String> confirmed = new HashSet<>();
    for (Map<String, Object> item : ledger) {
      confirmed.add((String) item.get("operationId"));
      assertEquals(
          1, ((Number) item.get("appliedCount")).intValue(), "effect applied once: " + item);
    }
    assertEquals(operationIds, confirmed, "every order's operation ID reached the sink");

    // Reconciliation against the sink's ledger confirms every delivered job: S -> C.
    JsonPath run =
        given()
            .baseUri(relay.baseUri().toString())
            .auth()
            .preemptive()
            .basic("demo", ADMIN_PASSWORD)
            .post("/reconciliation/runs")
            .then()
            .statusCode(201)
            .extract()
            .jsonPath();
    assertEquals(
        Map.of(
            "matched",
            ORDERS,
            "sent_unconfirmed",
            0,
            "confirmed_not_sent",
            0,
            "duplicate_effects",
            0,
            "dead",
            0),
        run.getMap("counts"));
    assertEquals(List.of(), run.getList("items"));
    given()
        .baseUri(demo.baseUri().toString())
        .get("/demo/report")
        .then()
        .statusCode(200)
        .body("outbox.C", equalTo(ORDERS))
        .body("outbox.S", equalTo(0));
    given()
        .baseUri(relay.baseUri().toString())
        .auth()
        .preemptive()
        .basic("demo", ADMIN_PASSWORD)
        .get("/reconciliation/report")
        .then()
        .statusCode(200)
        .body("run_id", equalTo(run.getInt("run_id")));

    // The sink really requires the signature: an unsigned delivery is refused and applies nothing.
    given()
        .baseUri(demo.baseUri().toString())
        .header("Idempotency-Key", "forged/billing")
        .contentType("application/json")
        .body("{}")
        .post("/sink/billing")
        .then()
        .statusCode(401)
        .body("detail", startsWith("MISSING"));

    String metrics = given().baseUri(relay.baseUri().toString()).get("/q/metrics").asString();
    assertTrue(
        metrics.contains(
            "outbox_delivery_attempts_total{destination=\"billing\",outcome=\"delivered\",source=\"default\"} "
                + ORDERS
                + ".0"),
        "relay counted one delivered attempt per order");

    // A JVM that ran its shutdown hooks after SIGTERM exits 128 + 15.
    assertEquals(
        143,
        relay.stop(Duration.ofSeconds(30)),
        "SIGTERM ends the relay through its shutdown hooks");
    assertTrue(relay.logText().contains("stopped (0 job(s) released unfinished)"), relay.tail());
    assertTrue(
        relay.logText().contains("signed [billing]"),
        "the start-up line names signed destinations");
    assertTrue(
        !relay.logText().contains(secret) && !demo.logText().contains(secret),
        "the secret is never logged");
  }

  /** How the relay's embedded users store a password: hex SHA-512 of "user:Quarkus:password". */
  static String sha512Hex(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              java.security.MessageDigest.getInstance("SHA-512")
                  .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-512", e);
    }
  }
}
