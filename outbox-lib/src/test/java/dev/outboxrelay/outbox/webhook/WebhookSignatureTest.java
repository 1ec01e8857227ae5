package dev.outboxrelay.outbox.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.webhook.WebhookSignature.Reason;
import dev.outboxrelay.outbox.webhook.WebhookSignature.Verification;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WebhookSignatureTest {
  static final byte[] SECRET = "whsec-test-secret".getBytes(StandardCharsets.UTF_8);
  static final byte[] BODY = "{\"orderId\":7}".getBytes(StandardCharsets.UTF_8);
  static final long T = 1_700_000_000L;
  static final Instant NOW = Instant.ofEpochSecond(T + 10);
  static final Duration TOLERANCE = Duration.ofMinutes(5);

  /**
   * Computed outside Java: printf '1700000000.{"orderId":7}' | openssl dgst -sha256 -hmac
   * whsec-test-secret
   */
  static final String OPENSSL_V1 =
      "654d0946056318e43ef97a35a54c08fd07531d144b1ff4eeb6ce109fc4a6fa51";

  static Verification verify(String header) {
    return WebhookSignature.verify(SECRET, header, BODY, NOW, TOLERANCE);
  }

  @Test
  void signMatchesAnIndependentHmacOverTimestampDotBody() throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(SECRET, "HmacSHA256"));
    mac.update((T + ".").getBytes(StandardCharsets.US_ASCII));
    byte[] raw = mac.doFinal(BODY);
    StringBuilder hex = new StringBuilder();
    for (byte b : raw) {
      hex.append(String.format("%02x", b & 0xff));
    }
    assertEquals(OPENSSL_V1, hex.toString(), "the test's two references agree");
    assertEquals("t=" + T + ",v1=" + OPENSSL_V1, WebhookSignature.sign(SECRET, T, BODY));
  }

  @Test
  void aFreshSignatureIsValid() {
    Verification v = verify(WebhookSignature.sign(SECRET, T, BODY));
    assertTrue(v.valid(), v.detail());
    assertEquals(Reason.VALID, v.reason());
  }

  @Test
  void anEmptyBodyCanBeSignedAndVerified() {
    String h = WebhookSignature.sign(SECRET, T, new byte[0]);
    assertTrue(WebhookSignature.verify(SECRET, h, new byte[0], NOW, TOLERANCE).valid());
  }

  @Test
  void whitespaceAroundEntriesUppercaseHexAndUnknownSchemesAreAccepted() {
    assertTrue(verify(" t=" + T + " , v0=zzz , v1=" + OPENSSL_V1.toUpperCase() + " ").valid());
  }

  @Test
  void anyOfSeveralV1EntriesMayMatchForSecretRotation() {
    String oldSecretSig =
        WebhookSignature.sign("old-secret".getBytes(StandardCharsets.UTF_8), T, BODY)
            .substring(("t=" + T + ",").length());
    assertTrue(verify("t=" + T + "," + oldSecretSig + ",v1=" + OPENSSL_V1).valid());
    assertTrue(verify("t=" + T + ",v1=" + OPENSSL_V1 + "," + oldSecretSig).valid());
    assertEquals(Reason.BAD_SIGNATURE, verify("t=" + T + "," + oldSecretSig).reason());
  }

  @Test
  void missingHeaderIsMissing() {
    assertEquals(Reason.MISSING, verify(null).reason());
    assertEquals(Reason.MISSING, verify("  ").reason());
    assertFalse(verify(null).valid());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "garbage",
        "v1=" + OPENSSL_V1, // no timestamp
        "t=1700000000", // no signature
        "t=1700000000,v1=abc", // short signature
        "t=1700000000,v1=" + OPENSSL_V1 + "zz", // long
        "t=1700000000,v1="
            + "g"
            + "54d0946056318e43ef97a35a54c08fd07531d144b1ff4eeb6ce109fc4a6fa51", // not hex
        "t=-1700000000,v1=" + OPENSSL_V1, // negative
        "t=17e8,v1=" + OPENSSL_V1, // not digits
        "t=,v1=" + OPENSSL_V1,
        "t=99999999999999999999,v1=" + OPENSSL_V1, // would overflow a long
        "t=1700000000,t=1700000000,v1=" + OPENSSL_V1, // two timestamps
        "t=1700000000,,v1=" + OPENSSL_V1, // empty entry
      })
  void malformedHeadersAreMalformed(String header) {
    Verification v = verify(header);
    assertEquals(Reason.MALFORMED, v.reason(), header + " -> " + v.detail());
    assertTrue(v.detail().startsWith("X-Outbox-Signature is malformed"), v.detail());
  }

  @Test
  void wrongSecretChangedBodyOrChangedTimestampIsABadSignature() {
    String good = WebhookSignature.sign(SECRET, T, BODY);
    assertEquals(
        Reason.BAD_SIGNATURE,
        WebhookSignature.verify(
                "another-secret".getBytes(StandardCharsets.UTF_8), good, BODY, NOW, TOLERANCE)
            .reason());
    assertEquals(
        Reason.BAD_SIGNATURE,
        WebhookSignature.verify(
                SECRET, good, "{\"orderId\":8}".getBytes(StandardCharsets.UTF_8), NOW, TOLERANCE)
            .reason());
    // The timestamp is bound into the MAC: moving it forward to dodge the staleness check fails.
    assertEquals(Reason.BAD_SIGNATURE, verify("t=" + (T + 5) + ",v1=" + OPENSSL_V1).reason());
  }

  @Test
  void theDetailNeverHoldsTheSecretOrTheExpectedSignature() {
    Verification v = verify("t=" + T + ",v1=" + "0".repeat(64));
    assertEquals(Reason.BAD_SIGNATURE, v.reason());
    assertFalse(v.detail().contains(OPENSSL_V1), v.detail());
    assertFalse(v.detail().contains("whsec-test-secret"), v.detail());
  }

  @Test
  void aCorrectlySignedOldRequestIsStaleAndAFarFutureOneIsFuture() {
    String h = WebhookSignature.sign(SECRET, T, BODY);
    Verification stale =
        WebhookSignature.verify(SECRET, h, BODY, Instant.ofEpochSecond(T + 301), TOLERANCE);
    assertEquals(Reason.STALE, stale.reason(), stale.detail());
    assertTrue(stale.detail().contains("301s old"), stale.detail());
    assertTrue(
        WebhookSignature.verify(SECRET, h, BODY, Instant.ofEpochSecond(T + 300), TOLERANCE).valid(),
        "exactly at the tolerance is still accepted");
    Verification future =
        WebhookSignature.verify(SECRET, h, BODY, Instant.ofEpochSecond(T - 301), TOLERANCE);
    assertEquals(Reason.FUTURE, future.reason(), future.detail());
    assertTrue(
        WebhookSignature.verify(SECRET, h, BODY, Instant.ofEpochSecond(T - 300), TOLERANCE)
            .valid());
  }

  @Test
  void emptySecretOrNegativeToleranceIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> WebhookSignature.sign(new byte[0], T, BODY));
    assertThrows(IllegalArgumentException.class, () -> WebhookSignature.sign(null, T, BODY));
    assertThrows(
        IllegalArgumentException.class,
        () -> WebhookSignature.verify(new byte[0], "t=1,v1=" + OPENSSL_V1, BODY, NOW, TOLERANCE));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            WebhookSignature.verify(
                SECRET, "t=1,v1=" + OPENSSL_V1, BODY, NOW, Duration.ofSeconds(-1)));
    assertThrows(IllegalArgumentException.class, () -> WebhookSignature.sign(SECRET, -1, BODY));
  }
}
