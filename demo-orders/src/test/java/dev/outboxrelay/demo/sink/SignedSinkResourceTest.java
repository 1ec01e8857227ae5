package dev.outboxrelay.demo.sink;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.demo.DemoDatabase;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.ValidatableResponse;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The demo sink with {@code demo.sink.hmac-secret} set: only validly signed deliveries apply. */
@QuarkusTest
@TestProfile(SignedSinkResourceTest.Signed.class)
class SignedSinkResourceTest {
  static final String SECRET = "demo-sink-test-secret";

  /** Being rotated out: still accepted. */
  static final String PREVIOUS_SECRET = "demo-sink-old-secret";

  static final String BODY = "{\"orderId\":5,\"note\":\"Zo\u00eb\"}";

  public static class Signed implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "demo.sink.hmac-secret", SECRET, "demo.sink.previous-hmac-secret", PREVIOUS_SECRET);
    }
  }

  @Inject DemoDatabase db;

  @BeforeEach
  void setUp() {
    db.reset();
  }

  static String sign(String secret, long epochSeconds) {
    return WebhookSignature.sign(
        secret.getBytes(StandardCharsets.UTF_8),
        epochSeconds,
        BODY.getBytes(StandardCharsets.UTF_8));
  }

  static RequestSpecification request(String operationId) {
    // Bytes, so the body on the wire is exactly what was signed.
    return given()
        .header("Idempotency-Key", operationId)
        .contentType("application/json")
        .body(BODY.getBytes(StandardCharsets.UTF_8));
  }

  static ValidatableResponse rejected(ValidatableResponse r, String reason) {
    return r.statusCode(401)
        .contentType("application/problem+json")
        .body("status", is(401))
        .body("field", is("X-Outbox-Signature"))
        .body("detail", startsWith(reason + ": "));
  }

  @Test
  void aValidSignatureIsApplied() {
    request("order-5/billing")
        .header("X-Outbox-Signature", sign(SECRET, Instant.now().getEpochSecond()))
        .post("/sink/billing")
        .then()
        .statusCode(200)
        .body("applied", is(true));
    assertEquals(1, db.invoices("order-5/billing"));
  }

  @Test
  void theSecretBeingRotatedOutIsStillAccepted() {
    request("order-11/billing")
        .header("X-Outbox-Signature", sign(PREVIOUS_SECRET, Instant.now().getEpochSecond()))
        .post("/sink/billing")
        .then()
        .statusCode(200)
        .body("applied", is(true));
    assertEquals(1, db.invoices("order-11/billing"));
  }

  @Test
  void aWrongSecretIs401AndNotApplied() {
    rejected(
        request("order-6/billing")
            .header("X-Outbox-Signature", sign("not-the-secret", Instant.now().getEpochSecond()))
            .post("/sink/billing")
            .then(),
        "BAD_SIGNATURE");
    assertNotApplied("order-6/billing");
  }

  @Test
  void aChangedBodyIs401AndNotApplied() {
    rejected(
        given()
            .header("Idempotency-Key", "order-7/billing")
            .contentType("application/json")
            .header("X-Outbox-Signature", sign(SECRET, Instant.now().getEpochSecond()))
            .body("{\"orderId\":5,\"note\":\"tampered\"}")
            .post("/sink/billing")
            .then(),
        "BAD_SIGNATURE");
    assertNotApplied("order-7/billing");
  }

  @Test
  void aStaleSignatureIs401AndNotApplied() {
    long tenMinutesAgo = Instant.now().minusSeconds(600).getEpochSecond();
    rejected(
        request("order-8/billing")
            .header("X-Outbox-Signature", sign(SECRET, tenMinutesAgo))
            .post("/sink/billing")
            .then(),
        "STALE");
    assertNotApplied("order-8/billing");
  }

  @Test
  void aMissingSignatureIs401AndNotApplied() {
    rejected(request("order-9/billing").post("/sink/billing").then(), "MISSING");
    assertNotApplied("order-9/billing");
  }

  @Test
  void aMalformedSignatureIs401AndNotApplied() {
    rejected(
        request("order-10/billing")
            .header("X-Outbox-Signature", "sha256=abc")
            .post("/sink/billing")
            .then(),
        "MALFORMED");
    assertNotApplied("order-10/billing");
  }

  private void assertNotApplied(String operationId) {
    assertEquals(0, db.invoices(operationId));
    given().get("/ledger/summary").then().body("applied", is(0)).body("deliveries", is(0));
  }
}
