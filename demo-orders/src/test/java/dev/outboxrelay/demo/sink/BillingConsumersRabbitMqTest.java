package dev.outboxrelay.demo.sink;

import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link BillingConsumersContract} on RabbitMQ: the application runs with the config profile {@code
 * rabbitmq} (the channel {@code billing-rabbitmq} as application.properties and docs/receiving.md
 * have it; {@link BillingBrokersProfile}) against the RabbitMQ at 127.0.0.1:5672. The broker is shared, so the exchange and queues
 * get per-run names (the only keys overridden) and are deleted afterwards. Messages carry the AMQP
 * {@code message-id} as the relay's RabbitMQ sink sets it.
 */
@QuarkusTest
@TestProfile(BillingBrokersProfile.class)
class BillingConsumersRabbitMqTest extends BillingConsumersContract {
  private static final String CHANNEL = "%rabbitmq.mp.messaging.incoming.billing-rabbitmq.";

  @ConfigProperty(name = "mp.messaging.incoming.billing-rabbitmq.exchange.name") String exchange;
  @ConfigProperty(name = "mp.messaging.incoming.billing-rabbitmq.queue.name") String queue;
  @ConfigProperty(name = "mp.messaging.incoming.billing-rabbitmq.dead-letter-queue-name") String deadLetterQueue;

  private Connection connection;
  private Channel channel;
  private final List<GetResponse> deadLetters = new ArrayList<>();

  /** The shared RabbitMQ, with names of this run for the exchange and queues the connector declares. */
  public static class Broker implements QuarkusTestResourceLifecycleManager {
    private final String prefix = "h18smr-" + UUID.randomUUID().toString().substring(0, 8) + "-";

    @Override
    public Map<String, String> start() {
      return Map.of("rabbitmq-host", "127.0.0.1", "rabbitmq-port", "5672",
          "rabbitmq-username", "guest", "rabbitmq-password", "guest",
          CHANNEL + "exchange.name", prefix + "billing",
          CHANNEL + "queue.name", prefix + "billing",
          CHANNEL + "dead-letter-exchange", prefix + "billing.dlx",
          CHANNEL + "dead-letter-queue-name", prefix + "billing.dlq");
    }

    @Override
    public void stop() {
      try (Connection c = factory().newConnection(); Channel ch = c.createChannel()) {
        ch.queueDelete(prefix + "billing");
        ch.queueDelete(prefix + "billing.dlq");
        ch.exchangeDelete(prefix + "billing");
        ch.exchangeDelete(prefix + "billing.dlx");
      } catch (Exception e) {
        throw new IllegalStateException("could not delete this run's exchanges and queues (" + prefix + "*)", e);
      }
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

  @BeforeEach
  void connect() throws Exception {
    connection = factory().newConnection();
    channel = connection.createChannel();
    await("the connector consuming " + queue).atMost(Duration.ofSeconds(60)).until(() -> {
      try (Channel probe = connection.createChannel()) {
        return probe.consumerCount(queue) > 0;
      } catch (java.io.IOException notDeclaredYet) {
        return false;
      }
    });
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
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(operationId)
        .contentType("application/json").headers(Map.of("operation-id", operationId)).build();
    channel.basicPublish(exchange, "billing", props, payload.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  List<String> deadLettered(String operationId) throws Exception {
    GetResponse r;
    while ((r = channel.basicGet(deadLetterQueue, true)) != null) {
      deadLetters.add(r);
    }
    return deadLetters.stream().filter(d -> operationId.equals(d.getProps().getMessageId()))
        .map(d -> new String(d.getBody(), StandardCharsets.UTF_8)).toList();
  }
}
