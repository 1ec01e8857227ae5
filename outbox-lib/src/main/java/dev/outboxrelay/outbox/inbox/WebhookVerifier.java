package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.webhook.WebhookSignature;
import dev.outboxrelay.outbox.webhook.WebhookSignature.Reason;
import dev.outboxrelay.outbox.webhook.WebhookSignature.Verification;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks {@value WebhookSignature#HEADER} as the relay signs it ({@link WebhookSignature}) against
 * one or two secrets: during a rotation the receiver accepts the new and the old secret, while the
 * relay switches (or signs with both). Thread-safe.
 */
public final class WebhookVerifier {
  private final List<byte[]> secrets;
  private final Duration tolerance;
  private final Clock clock;

  private WebhookVerifier(List<byte[]> secrets, Duration tolerance, Clock clock) {
    this.secrets = secrets;
    this.tolerance = tolerance;
    this.clock = clock;
  }

  /**
   * Requires a valid signature under one of {@code secrets} (one or two, none empty), with a
   * timestamp within {@code tolerance} of {@code clock}, either way.
   */
  public static WebhookVerifier of(List<String> secrets, Duration tolerance, Clock clock) {
    if (secrets == null || secrets.isEmpty() || secrets.size() > 2) {
      throw new IllegalArgumentException(
          "webhook secrets: give one, or two while rotating; got "
              + (secrets == null ? 0 : secrets.size()));
    }
    if (tolerance == null || tolerance.isNegative()) {
      throw new IllegalArgumentException(
          "webhook signature tolerance must be >= 0, was " + tolerance);
    }
    List<byte[]> keys = new ArrayList<>();
    for (String s : secrets) {
      if (s == null || s.isBlank()) {
        throw new IllegalArgumentException("a webhook secret is empty");
      }
      keys.add(s.getBytes(StandardCharsets.UTF_8));
    }
    return new WebhookVerifier(List.copyOf(keys), tolerance, clock);
  }

  /** Accepts unsigned requests (a receiver behind its own authentication). */
  public static WebhookVerifier unsigned() {
    return new WebhookVerifier(List.of(), Duration.ZERO, Clock.systemUTC());
  }

  /** Whether requests must be signed. */
  public boolean required() {
    return !secrets.isEmpty();
  }

  /**
   * Valid when unsigned requests are accepted, or one secret verifies. Otherwise the most telling
   * refusal: a signature that matched with a timestamp out of tolerance before a mismatch.
   */
  public Verification verify(String header, byte[] body) {
    if (secrets.isEmpty()) {
      return new Verification(Reason.VALID, "signatures are not required");
    }
    Verification worst = null;
    for (byte[] secret : secrets) {
      Verification v = WebhookSignature.verify(secret, header, body, clock.instant(), tolerance);
      if (v.valid()) {
        return v;
      }
      if (worst == null || v.reason() == Reason.STALE || v.reason() == Reason.FUTURE) {
        worst = v;
      }
    }
    return worst;
  }
}
