package dev.outboxrelay.outbox.store;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The UTF-8 size and SHA-256 of a payload body. An out-of-band body ({@code outbox_payload}) is
 * stored with both: the relay verifies them before a send, and an idempotent re-enqueue compares
 * them instead of reading the stored body back.
 *
 * @param sha256 lowercase hex
 */
public record PayloadDigest(int sizeBytes, String sha256) {

  public static PayloadDigest of(String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return new PayloadDigest(bytes.length, sha256Hex(bytes));
  }

  /** Lowercase hex SHA-256 of {@code bytes}. */
  public static String sha256Hex(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  /**
   * The text a by-reference job's {@code payload} column holds, for people reading the row. It is
   * never parsed: the column {@code payload_by_ref} alone says whether a job is by reference, so a
   * payload that merely looks like this is delivered as it is.
   */
  public String reference() {
    return "outbox_payload: " + sizeBytes + " bytes, sha256 " + sha256;
  }
}
