package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedMessage;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Publishes a job as one persistent AMQP message through the SmallRye Reactive Messaging channel
 * {@value #CHANNEL}, which has publisher confirms on: routing key per destination, AMQP {@code
 * message-id} = the operation ID (consumers deduplicate on it), headers {@code operation-id},
 * {@code outbox-message-id}, {@code outbox-attempt} plus the job's own. Delivered only once the
 * broker confirmed the message; a nack, a closed channel or no confirm within the request timeout
 * is a retry (see {@link ChannelPublisher}).
 *
 * <p>The connector publishes a channel to one exchange ({@value #EXCHANGE_KEY}); destinations
 * route within it by routing key. A broker confirms a message that no queue is bound for and
 * drops it, so bind the queues (or set an alternate exchange) before enqueueing.
 */
public final class RabbitMqSink implements MessageSink {
  /** The outgoing channel every RabbitMQ destination publishes through. */
  public static final String CHANNEL = "outbox-rabbitmq";
  /** Where the channel's exchange is configured. */
  public static final String EXCHANGE_KEY = "mp.messaging.outgoing." + CHANNEL + ".exchange.name";
  /** AMQP delivery mode 2: the broker writes the message to disk (with a durable queue). */
  static final int PERSISTENT = 2;

  private final String routingKey;
  private final ChannelPublisher publisher;

  public RabbitMqSink(String exchange, String routingKey, Duration confirmTimeout,
      Consumer<Message<String>> channel) {
    this.routingKey = routingKey;
    this.publisher = new ChannelPublisher(channel, confirmTimeout,
        "rabbitmq " + exchange + "/" + routingKey, "RabbitMqConfirmTimeout");
  }

  public String routingKey() {
    return routingKey;
  }

  @Override
  public SinkResult deliver(ClaimedMessage m) throws InterruptedException {
    Map<String, Object> headers = new LinkedHashMap<>(SinkHeaders.of(m));
    headers.remove("content-type"); // an AMQP property of its own
    return publisher.publish(m.payload(), OutgoingRabbitMQMetadata.builder()
        .withRoutingKey(routingKey)
        .withMessageId(m.operationId())
        .withContentType(m.contentType())
        .withDeliveryMode(PERSISTENT)
        .withTimestamp(ZonedDateTime.now(ZoneOffset.UTC))
        .withHeaders(headers)
        .build());
  }
}
