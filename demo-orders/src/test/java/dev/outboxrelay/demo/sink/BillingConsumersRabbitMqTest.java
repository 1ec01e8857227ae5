package dev.outboxrelay.demo.sink;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link BillingConsumersContract} on RabbitMQ: the application runs with the config profile {@code
 * rabbitmq} (the channel {@code billing-rabbitmq} as application.properties and docs/receiving.md
 * have it; {@link BillingBrokersProfile}) against the RabbitMQ at 127.0.0.1:5672. The broker is
 * shared, so the exchange and queues get per-run names (the only keys overridden) and are deleted
 * afterwards. Messages carry the AMQP {@code message-id} as the relay's RabbitMQ sink sets it.
 */
@QuarkusTest
@TestProfile(BillingBrokersProfile.class)
class BillingConsumersRabbitMqTest extends BillingConsumersContract {
  @ConfigProperty(name = "mp.messaging.incoming.billing-rabbitmq.exchange.name")
  String exchange;

  @ConfigProperty(name = "mp.messaging.incoming.billing-rabbitmq.queue.name")
  String queue;

  @ConfigProperty(name = "mp.messaging.incoming.billing-rabbitmq.dead-letter-queue-name")
  String deadLetterQueue;

  private Connection connection;
  private Channel channel;
  private final List<GetResponse> deadLetters = new ArrayList<>();

  /**
   * The shared RabbitMQ, with names of this run for the exchange and queues the connector declares.
   */
  public static class Broker implements QuarkusTestResourceLifecycleManager {
    private final BillingRabbitMq names = new BillingRabbitMq();

    @Override
    public Map<String, String> start() {
      return names.settings();
    }

    @Override
    public void stop() {
      names.delete();
    }
  }

  @BeforeEach
  void connect() throws Exception {
    connection = BillingRabbitMq.factory().newConnection();
    channel = connection.createChannel();
    BillingRabbitMq.awaitConsumer(connection, queue, Duration.ofSeconds(60));
  }

  @AfterEach
  void disconnect() throws Exception {
    connection.close();
  }

  @Override
  String destination() {
    return "billing-rabbitmq";
  }

  @Override
  void publish(String operationId, String payload) throws Exception {
    BillingRabbitMq.publish(channel, exchange, operationId, payload);
  }

  @Override
  List<String> deadLettered(String operationId) throws Exception {
    GetResponse r;
    while ((r = channel.basicGet(deadLetterQueue, true)) != null) {
      deadLetters.add(r);
    }
    return deadLetters.stream()
        .filter(d -> operationId.equals(d.getProps().getMessageId()))
        .map(d -> new String(d.getBody(), StandardCharsets.UTF_8))
        .toList();
  }
}
