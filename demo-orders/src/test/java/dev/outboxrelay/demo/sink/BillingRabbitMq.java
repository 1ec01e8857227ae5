package dev.outboxrelay.demo.sink;

import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

/**
 * The RabbitMQ side of the billing consumer tests ({@link BillingConsumersRabbitMqTest}, {@link
 * BillingConsumersRabbitMqKillIT}): the shared RabbitMQ at 127.0.0.1:5672, with names of this run
 * for the exchanges and queues the connector of the channel {@code billing-rabbitmq} declares (the
 * only keys of application.properties' channel overridden), and messages published as the relay's
 * RabbitMQ sink publishes them.
 */
final class BillingRabbitMq {
  /** The channel's keys as application.properties has them, under the config profile rabbitmq. */
  private static final String CHANNEL = "%rabbitmq.mp.messaging.incoming.billing-rabbitmq.";

  /** The routing key the relay's RabbitMQ sink publishes with. */
  private static final String ROUTING_KEY = "billing";

  private final String prefix = "h18smr-" + UUID.randomUUID().toString().substring(0, 8) + "-";

  String exchange() {
    return prefix + "billing";
  }

  String queue() {
    return prefix + "billing";
  }

  String deadLetterQueue() {
    return prefix + "billing.dlq";
  }

  /** The broker's address and this run's names, as configuration of the receiving application. */
  Map<String, String> settings() {
    return Map.of(
        "rabbitmq-host",
        "127.0.0.1",
        "rabbitmq-port",
        "5672",
        "rabbitmq-username",
        "guest",
        "rabbitmq-password",
        "guest",
        CHANNEL + "exchange.name",
        exchange(),
        CHANNEL + "queue.name",
        queue(),
        CHANNEL + "dead-letter-exchange",
        prefix + "billing.dlx",
        CHANNEL + "dead-letter-queue-name",
        deadLetterQueue());
  }

  /** Deletes this run's exchanges and queues. */
  void delete() {
    try (Connection c = factory().newConnection();
        Channel ch = c.createChannel()) {
      ch.queueDelete(queue());
      ch.queueDelete(deadLetterQueue());
      ch.exchangeDelete(exchange());
      ch.exchangeDelete(prefix + "billing.dlx");
    } catch (Exception e) {
      throw new IllegalStateException(
          "could not delete this run's exchanges and queues (" + prefix + "*)", e);
    }
  }

  static ConnectionFactory factory() {
    ConnectionFactory f = new ConnectionFactory();
    f.setHost("127.0.0.1");
    f.setPort(5672);
    f.setUsername("guest");
    f.setPassword("guest");
    return f;
  }

  /** Waits until the connector has declared {@code queue} and consumes from it. */
  static void awaitConsumer(Connection connection, String queue, Duration timeout) {
    await("the connector consuming " + queue)
        .atMost(timeout)
        .until(
            () -> {
              try (Channel probe = connection.createChannel()) {
                return probe.consumerCount(queue) > 0;
              } catch (IOException notDeclaredYet) {
                return false;
              }
            });
  }

  /**
   * Publishes {@code payload} to {@code exchange} with the AMQP {@code message-id} and the header
   * {@code operation-id} set to {@code operationId}, as the relay's RabbitMQ sink does.
   */
  static void publish(Channel channel, String exchange, String operationId, String payload)
      throws IOException {
    AMQP.BasicProperties props =
        new AMQP.BasicProperties.Builder()
            .messageId(operationId)
            .contentType("application/json")
            .headers(Map.of("operation-id", operationId))
            .build();
    channel.basicPublish(exchange, ROUTING_KEY, props, payload.getBytes(StandardCharsets.UTF_8));
  }
}
