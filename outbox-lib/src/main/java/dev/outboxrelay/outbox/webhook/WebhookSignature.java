package dev.outboxrelay.outbox.webhook;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The {@value #HEADER} header of a signed delivery, made by the relay and checked by receivers.
 *
 * <p>Format: {@code t=<unix seconds>,v1=<hex>} where {@code <hex>} is the lowercase hex
 * HMAC-SHA256, keyed with the shared secret, of the ASCII timestamp, a dot and the raw body bytes:
 * {@code HMAC(secret, "<t>." + body)}. The timestamp is inside the MAC, so a receiver that rejects
 * old timestamps also rejects replays of old requests. A header may carry several {@code v1=}
 * entries (a sender rotating its secret signs with old and new); one match is enough. Entries with
 * other names are ignored, so a later scheme can be added beside {@code v1}.
 *
 * <p>A receiver verifies over the body bytes exactly as received (before any JSON parsing or
 * re-encoding):
 *
 * <pre>{@code
 * Verification v = WebhookSignature.verify(secret, request.header("X-Outbox-Signature"),
 *     rawBody, Instant.now(), WebhookSignature.DEFAULT_TOLERANCE);
 * if (!v.valid()) { respond 401 with v.detail(); }
 * }</pre>
 *
 * <p>Comparison is constant-time. Neither the secret nor the expected signature ever appears in a
 * result or an exception message.
 */
public final class WebhookSignature {
  /** The request header carrying the signature. */
  public static final String HEADER = "X-Outbox-Signature";

  /** The signature scheme: HMAC-SHA256 over {@code "<t>.<body>"}. */
  public static final String SCHEME_V1 = "v1";

  /** How far a timestamp may lie from the receiver's clock, either way, by default. */
  public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);

  private static final String ALGORITHM = "HmacSHA256";
  private static final int MAC_BYTES = 32;

  /**
   * More digits than any plausible unix time; also keeps the subtraction below from overflowing.
   */
  private static final int MAX_TIMESTAMP_DIGITS = 12;

  private static final HexFormat HEX = HexFormat.of();

  private WebhookSignature() {}

  /** Why a request was accepted or not. */
  public enum Reason {
    VALID,
    /** No header, or a blank one. */
    MISSING,
    /** The header is not {@code t=<digits>,v1=<64 hex>[,v1=...]}. */
    MALFORMED,
    /** No {@code v1} entry matches the body under this secret. */
    BAD_SIGNATURE,
    /** The signature matches but the timestamp is older than the tolerance. */
    STALE,
    /** The signature matches but the timestamp is further ahead than the tolerance. */
    FUTURE
  }

  /**
   * The outcome of {@link #verify}.
   *
   * @param reason {@link Reason#VALID} or why not
   * @param detail a sentence for logs and error responses; never holds the secret or the expected
   *     signature
   */
  public record Verification(Reason reason, String detail) {
    public Verification {
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(detail, "detail");
    }

    public boolean valid() {
      return reason == Reason.VALID;
    }
  }

  /**
   * The header value for {@code body} sent at {@code epochSeconds}.
   *
   * @throws IllegalArgumentException for an empty secret or a negative timestamp
   */
  public static String sign(byte[] secret, long epochSeconds, byte[] body) {
    if (epochSeconds < 0) {
      throw new IllegalArgumentException("timestamp must be >= 0, was " + epochSeconds);
    }
    return "t="
        + epochSeconds
        + ","
        + SCHEME_V1
        + "="
        + HEX.formatHex(mac(secret, epochSeconds, body));
  }

  /**
   * Checks {@code headerValue} (null when the header is absent) against {@code body} as received.
   * Valid when one {@code v1} entry matches and the timestamp is within {@code tolerance} of {@code
   * now}, either way.
   *
   * @throws IllegalArgumentException for an empty secret or a negative tolerance
   */
  public static Verification verify(
      byte[] secret, String headerValue, byte[] body, Instant now, Duration tolerance) {
    checkSecret(secret);
    Objects.requireNonNull(body, "body");
    Objects.requireNonNull(now, "now");
    if (tolerance == null || tolerance.isNegative()) {
      throw new IllegalArgumentException("tolerance must be >= 0, was " + tolerance);
    }
    if (headerValue == null || headerValue.isBlank()) {
      return new Verification(Reason.MISSING, HEADER + " header is missing");
    }
    Long timestamp = null;
    List<byte[]> signatures = new ArrayList<>();
    for (String item : headerValue.split(",", -1)) {
      int eq = item.indexOf('=');
      if (eq < 0) {
        return malformed("entry '" + item.strip() + "' is not name=value");
      }
      String name = item.substring(0, eq).strip();
      String value = item.substring(eq + 1).strip();
      if (name.equals("t")) {
        if (timestamp != null) {
          return malformed("t appears more than once");
        }
        if (value.isEmpty()
            || value.length() > MAX_TIMESTAMP_DIGITS
            || !value.chars().allMatch(WebhookSignature::isDigit)) {
          return malformed("t must be unix seconds (digits only)");
        }
        timestamp = Long.parseLong(value);
      } else if (name.equals(SCHEME_V1)) {
        if (value.length() != 2 * MAC_BYTES || !value.chars().allMatch(WebhookSignature::isHex)) {
          return malformed("v1 must be " + 2 * MAC_BYTES + " hex digits");
        }
        signatures.add(HEX.parseHex(value));
      }
      // Other names: a scheme this version does not know; ignored.
    }
    if (timestamp == null) {
      return malformed("no t= timestamp");
    }
    if (signatures.isEmpty()) {
      return malformed("no v1= signature");
    }
    byte[] expected = mac(secret, timestamp, body);
    boolean match = false;
    for (byte[] candidate : signatures) {
      // Constant-time; every entry is compared so timing does not tell which one matched.
      match |= MessageDigest.isEqual(expected, candidate);
    }
    if (!match) {
      return new Verification(
          Reason.BAD_SIGNATURE,
          HEADER + " does not match the body (wrong secret, or the body or timestamp was changed)");
    }
    long age = now.getEpochSecond() - timestamp;
    if (age > tolerance.toSeconds()) {
      return new Verification(
          Reason.STALE,
          HEADER
              + " timestamp t="
              + timestamp
              + " is "
              + age
              + "s old; the tolerance is "
              + tolerance.toSeconds()
              + "s (a replayed request, or clocks apart)");
    }
    if (-age > tolerance.toSeconds()) {
      return new Verification(
          Reason.FUTURE,
          HEADER
              + " timestamp t="
              + timestamp
              + " is "
              + -age
              + "s in the future; the tolerance is "
              + tolerance.toSeconds()
              + "s (clocks apart)");
    }
    return new Verification(Reason.VALID, HEADER + " is valid");
  }

  private static Verification malformed(String why) {
    return new Verification(
        Reason.MALFORMED,
        HEADER + " is malformed: " + why + "; expected t=<unix seconds>,v1=<hex HMAC-SHA256>");
  }

  private static byte[] mac(byte[] secret, long epochSeconds, byte[] body) {
    checkSecret(secret);
    Objects.requireNonNull(body, "body");
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(new SecretKeySpec(secret, ALGORITHM));
      mac.update((epochSeconds + ".").getBytes(StandardCharsets.US_ASCII));
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      // HmacSHA256 is a required algorithm of every Java platform.
      throw new IllegalStateException(ALGORITHM + " is not available", e);
    }
  }

  private static void checkSecret(byte[] secret) {
    if (secret == null || secret.length == 0) {
      throw new IllegalArgumentException("the webhook secret must not be empty");
    }
  }

  private static boolean isDigit(int c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isHex(int c) {
    return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
}
