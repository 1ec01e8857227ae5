package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import java.nio.charset.StandardCharsets;
import org.eclipse.microprofile.reactive.messaging.Message;

/** The body bytes and header values of broker messages, as the readers need them. */
final class MessagePayloads {
  private MessagePayloads() {}

  /**
   * The payload as bytes. The inbox hashes exactly what the sender sent, so a payload the connector
   * already converted (a RabbitMQ JSON body becomes a JsonObject) is refused: its re-encoding need
   * not match the original bytes, and a repeat would then look like a conflict.
   */
  static byte[] bytes(Message<?> message, String hint) {
    Object p = message.getPayload();
    if (p instanceof byte[] b) {
      return b;
    }
    if (p instanceof String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    throw new InvalidDeliveryException(
        "payload",
        "the message payload is "
            + (p == null ? "null" : p.getClass().getName())
            + ", expected byte[] or String: "
            + hint);
  }

  /** The relay's job id header ({@code outbox-message-id}) as a number; null when absent. */
  static Long jobId(Object header) {
    if (header == null) {
      return null;
    }
    String text =
        header instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : header.toString();
    try {
      return Long.valueOf(text.trim());
    } catch (NumberFormatException e) {
      throw new InvalidDeliveryException(
          OUTBOX_MESSAGE_ID, OUTBOX_MESSAGE_ID + " is not a number: '" + text + "'");
    }
  }

  /** The header the relay writes with its job id (Kafka and RabbitMQ). */
  static final String OUTBOX_MESSAGE_ID = "outbox-message-id";
}
