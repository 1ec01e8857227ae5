package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Reads deliveries from the relay's RabbitMQ messages: the operation ID from the AMQP {@code
 * message-id} property (the relay's RabbitMQ sink sets it), the job id from the {@code
 * outbox-message-id} header, the body as bytes (set the channel's {@code content-type-override} to
 * {@code application/octet-stream}, or the connector turns a JSON body into a JsonObject).
 *
 * <p>Its nacks carry {@link RabbitMQRejectMetadata}: a {@linkplain MessageInbox#isRetryable
 * retryable} failure is requeued (delivered again at once), any other is rejected without requeue
 * (dropped, or moved to the queue's dead-letter exchange: give it one). Needs the channel's {@code
 * failure-strategy=reject} (the default), the strategy that reads that metadata.
 */
public final class RabbitMqDeliveries {
  /** The AMQP property that carries the operation ID. */
  public static final String MESSAGE_ID = "message-id";

  private RabbitMqDeliveries() {}

  /** A reader for the relay's destination {@code destination} (its name in the relay's config). */
  public static DeliveryReader reader(String destination) {
    return new DeliveryReader() {
      @Override
      public InboxDelivery read(Message<?> message) {
        return RabbitMqDeliveries.read(destination, message);
      }

      @Override
      public Metadata nackMetadata(Throwable failure) {
        return Metadata.of(new RabbitMQRejectMetadata(MessageInbox.isRetryable(failure)));
      }
    };
  }

  private static InboxDelivery read(String destination, Message<?> message) {
    IncomingRabbitMQMetadata meta =
        message
            .getMetadata(IncomingRabbitMQMetadata.class)
            .orElseThrow(
                () ->
                    new InvalidDeliveryException(
                        MESSAGE_ID,
                        "not a RabbitMQ message (no IncomingRabbitMQMetadata): use RabbitMqDeliveries on a RabbitMQ channel"));
    String op =
        meta.getMessageId()
            .orElseThrow(
                () ->
                    new InvalidDeliveryException(
                        MESSAGE_ID,
                        "the message has no "
                            + MESSAGE_ID
                            + " property (exchange "
                            + meta.getExchange()
                            + ", routing key "
                            + meta.getRoutingKey()
                            + ")"));
    return new InboxDelivery(
        op,
        destination,
        MessagePayloads.bytes(
            message, "set the channel's content-type-override to application/octet-stream"),
        MessagePayloads.jobId(meta.getHeaders().get(MessagePayloads.OUTBOX_MESSAGE_ID)));
  }
}
