package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;

/**
 * Reads deliveries from the relay's RabbitMQ messages: the operation ID from the AMQP {@code
 * message-id} property (the relay's RabbitMQ sink sets it), the job id from the {@code
 * outbox-message-id} header, the body as bytes (set the channel's {@code content-type-override}
 * to {@code application/octet-stream}, or the connector turns a JSON body into a JsonObject).
 */
public final class RabbitMqDeliveries {
  /** The AMQP property that carries the operation ID. */
  public static final String MESSAGE_ID = "message-id";

  private RabbitMqDeliveries() {}

  /** A reader for the relay's destination {@code destination} (its name in the relay's config). */
  public static DeliveryReader reader(String destination) {
    return message -> {
      IncomingRabbitMQMetadata meta = message.getMetadata(IncomingRabbitMQMetadata.class)
          .orElseThrow(() -> new InvalidDeliveryException(MESSAGE_ID,
              "not a RabbitMQ message (no IncomingRabbitMQMetadata): use RabbitMqDeliveries on a RabbitMQ channel"));
      String op = meta.getMessageId().orElseThrow(() -> new InvalidDeliveryException(MESSAGE_ID,
          "the message has no " + MESSAGE_ID + " property (exchange " + meta.getExchange()
              + ", routing key " + meta.getRoutingKey() + ")"));
      return new InboxDelivery(op, destination,
          MessagePayloads.bytes(message, "set the channel's content-type-override to application/octet-stream"),
          MessagePayloads.jobId(meta.getHeaders().get(MessagePayloads.OUTBOX_MESSAGE_ID)));
    };
  }
}
