package dev.outboxrelay.outbox.store;

/**
 * The out-of-band body of a by-reference job, as stored in {@code outbox_payload}, with the size
 * and digest recorded at enqueue.
 */
public record StoredPayload(long messageId, String body, int sizeBytes, String sha256) {

  /**
   * Null when the body still has the recorded size and SHA-256; otherwise what differs, for a
   * diagnosis (a body changed or truncated by hand, or damaged, must not be sent as the job).
   */
  public String mismatch() {
    PayloadDigest actual = PayloadDigest.of(body);
    if (actual.sizeBytes() != sizeBytes) {
      return "body is " + actual.sizeBytes() + " bytes, recorded " + sizeBytes;
    }
    if (!actual.sha256().equalsIgnoreCase(sha256.strip())) {
      return "body has sha256 " + actual.sha256() + ", recorded " + sha256.strip();
    }
    return null;
  }
}
