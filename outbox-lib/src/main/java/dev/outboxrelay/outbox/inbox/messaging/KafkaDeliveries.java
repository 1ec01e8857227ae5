package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Reads deliveries from the relay's Kafka records: the operation ID from the {@code operation-id}
 * header, the job id from {@code outbox-message-id}, the body from the record value (configure the
 * channel's {@code value.deserializer} as {@code ByteArrayDeserializer} or {@code
 * StringDeserializer}).
 */
public final class KafkaDeliveries {
  /** The header the relay's Kafka sink writes the operation ID to. */
  public static final String OPERATION_ID_HEADER = "operation-id";

  private KafkaDeliveries() {}

  /** A reader for the relay's destination {@code destination} (its name in the relay's config). */
  public static DeliveryReader reader(String destination) {
    return message -> {
      IncomingKafkaRecordMetadata<?, ?> meta =
          message
              .getMetadata(IncomingKafkaRecordMetadata.class)
              .orElseThrow(
                  () ->
                      new InvalidDeliveryException(
                          OPERATION_ID_HEADER,
                          "not a Kafka record (no IncomingKafkaRecordMetadata): use KafkaDeliveries on a Kafka channel"));
      Headers headers = meta.getHeaders();
      Header op = headers.lastHeader(OPERATION_ID_HEADER);
      if (op == null || op.value() == null) {
        throw new InvalidDeliveryException(
            OPERATION_ID_HEADER,
            "the record has no "
                + OPERATION_ID_HEADER
                + " header (topic "
                + meta.getTopic()
                + ", partition "
                + meta.getPartition()
                + ", offset "
                + meta.getOffset()
                + ")");
      }
      Header job = headers.lastHeader(MessagePayloads.OUTBOX_MESSAGE_ID);
      return new InboxDelivery(
          new String(op.value(), StandardCharsets.UTF_8),
          destination,
          MessagePayloads.bytes(
              message, "set the channel's value.deserializer to ByteArrayDeserializer"),
          MessagePayloads.jobId(job == null ? null : job.value()));
    };
  }
}
