package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.webhook.WebhookSignature;

/** A delivery without a valid {@code X-Outbox-Signature}; answered 401, nothing applied. */
public class SignatureRejectedException extends RuntimeException {
  private final WebhookSignature.Reason reason;

  public SignatureRejectedException(WebhookSignature.Verification verification) {
    super(verification.detail());
    this.reason = verification.reason();
  }

  /** Why: MISSING, MALFORMED, BAD_SIGNATURE, STALE or FUTURE. */
  public WebhookSignature.Reason reason() {
    return reason;
  }
}
