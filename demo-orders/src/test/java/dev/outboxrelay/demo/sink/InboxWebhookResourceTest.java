package dev.outboxrelay.demo.sink;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.demo.DemoDatabase;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * outbox-lib's ready-made webhook ({@code InboxWebhookResource}) over HTTP: signatures under two
 * secrets, the answers 200 / 409 / 401 / 503 + Retry-After / 422 / 500 / 413, and nothing recorded
 * on any refusal (counted in the business table and the inbox).
 */
@QuarkusTest
class InboxWebhookResourceTest {
  @Inject DemoDatabase db;

  @BeforeEach
  void setUp() {
    db.reset();
  }

  private static ValidatableResponse post(String key, String body, String secret, long at) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    var request = given().contentType("application/json").body(bytes);
    if (key != null) {
      request.header("Idempotency-Key", key);
    }
    if (secret != null) {
      request.header(
          WebhookSignature.HEADER,
          WebhookSignature.sign(secret.getBytes(StandardCharsets.UTF_8), at, bytes));
    }
    return request.post("/test-webhook").then();
  }

  private static ValidatableResponse post(String key, String body, String secret) {
    return post(key, body, secret, Instant.now().getEpochSecond());
  }

  @Test
  void bothSecretsOfARotationAreAcceptedAndARepeatAnswers200NotApplied() {
    post("w-1", "{\"n\":1}", FlakyWebhook.NEW_SECRET)
        .statusCode(200)
        .body("applied", is(true))
        .body("outcome", is("invoiced"))
        .body("deliveries", is(1));
    post("w-1", "{\"n\":1}", FlakyWebhook.OLD_SECRET)
        .statusCode(200)
        .body("applied", is(false))
        .body("outcome", is("invoiced"))
        .body("deliveries", is(2));
    assertEquals(1, db.invoices("w-1"));
  }

  @Test
  void aThirdSecretAStaleOrAMissingSignatureIs401AndRecordsNothing() {
    post("w-2", "{}", "some-other-secret")
        .statusCode(401)
        .contentType("application/problem+json")
        .body("field", is(WebhookSignature.HEADER))
        .body("detail", startsWith("BAD_SIGNATURE: "));
    post("w-2", "{}", FlakyWebhook.OLD_SECRET, Instant.now().minusSeconds(600).getEpochSecond())
        .statusCode(401)
        .body("detail", startsWith("STALE: "));
    post("w-2", "{}", null).statusCode(401).body("detail", startsWith("MISSING: "));
    assertNothingRecorded("w-2");
  }

  @Test
  void anotherBodyUnderAnAppliedKeyIs409() {
    post("w-3", "{\"n\":3}", FlakyWebhook.NEW_SECRET).statusCode(200);
    post("w-3", "{\"n\":4}", FlakyWebhook.NEW_SECRET)
        .statusCode(409)
        .body("field", is("Idempotency-Key"));
    assertEquals(1, db.invoices("w-3"));
  }

  @Test
  void aTransientHandlerFailureIs503WithRetryAfterAndRecordsNothing() {
    post("w-4", "transient", FlakyWebhook.NEW_SECRET)
        .statusCode(503)
        .header("Retry-After", "7")
        .contentType("application/problem+json");
    post("w-4", "transient-no-hint", FlakyWebhook.NEW_SECRET)
        .statusCode(503)
        .header("Retry-After", "30");
    assertNothingRecorded("w-4");
  }

  @Test
  void aRejectionIs422AndABugIs500AndNeitherRecordsAnything() {
    post("w-5", "reject", FlakyWebhook.NEW_SECRET)
        .statusCode(422)
        .body("detail", is("no such customer"));
    post("w-6", "bug", FlakyWebhook.NEW_SECRET).statusCode(500);
    assertNothingRecorded("w-5");
    assertNothingRecorded("w-6");
  }

  @Test
  void aMissingKeyIs400AndABodyOverTheLimitIs413() {
    post(null, "{}", FlakyWebhook.NEW_SECRET).statusCode(400).body("field", is("Idempotency-Key"));
    post("w-7", "x".repeat(1_048_577), FlakyWebhook.NEW_SECRET)
        .statusCode(413)
        .body("field", is("body"));
    assertNothingRecorded("w-7");
  }

  private void assertNothingRecorded(String key) {
    assertEquals(0, db.invoices(key));
    assertEquals(
        0, db.jdbc().queryLong("SELECT COUNT(*) FROM outbox_inbox WHERE operation_id = ?", key));
  }
}
