package dev.outboxrelay.outbox.inbox;

import java.nio.charset.StandardCharsets;

/**
 * One delivery as the receiver got it.
 *
 * @param operationId the relay's operation ID ({@code Idempotency-Key}, the Kafka {@code
 *     operation-id} header, the AMQP {@code message-id}): what is applied once
 * @param destination the relay's destination name this receiver serves (e.g. {@code http:billing});
 *     one inbox may serve several, each ID is deduplicated per destination
 * @param payload the body bytes exactly as received
 * @param messageId the relay's job id ({@code X-Outbox-Message-Id}), or null; kept for the ledger
 */
public record InboxDelivery(
    String operationId, String destination, byte[] payload, Long messageId) {

  /** A delivery with a text body (encoded as UTF-8) and no job id. */
  public static InboxDelivery of(String operationId, String destination, String payload) {
    return new InboxDelivery(
        operationId,
        destination,
        payload == null ? null : payload.getBytes(StandardCharsets.UTF_8),
        null);
  }

  /** The body decoded as UTF-8. */
  public String payloadText() {
    return new String(payload, StandardCharsets.UTF_8);
  }
}
