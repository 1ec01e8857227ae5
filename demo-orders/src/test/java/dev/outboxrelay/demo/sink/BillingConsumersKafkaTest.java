package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.messaging.KafkaDeliveries;
import dev.outboxrelay.outbox.testing.KafkaBroker;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;

/**
 * {@link BillingConsumersContract} on Kafka: the application runs with the config profile {@code
 * kafka} (the channel {@code billing-kafka} as application.properties and docs/receiving.md have
 * it; {@link BillingBrokersProfile}) against a real KRaft broker started for it; records carry the
 * {@code operation-id} header as the relay's Kafka sink writes it.
 */
@QuarkusTest
@TestProfile(BillingBrokersProfile.class)
class BillingConsumersKafkaTest extends BillingConsumersContract {
  @ConfigProperty(name = "kafka.bootstrap.servers")
  String bootstrapServers;

  private BillingKafka publisher;
  private final List<ConsumerRecord<byte[], byte[]>> deadLetters = new ArrayList<>();
  private KafkaConsumer<byte[], byte[]> deadLetterReader;

  /** A fresh KRaft broker with the channel's topics, retry topics and dead-letter topic created. */
  public static class Broker implements QuarkusTestResourceLifecycleManager {
    private KafkaBroker broker;

    @Override
    public Map<String, String> start() {
      broker = BillingKafka.startBroker(Path.of("target", "kafka-billing-consumers"));
      return Map.of("kafka.bootstrap.servers", broker.bootstrapServers());
    }

    @Override
    public void stop() {
      if (broker == null) {
        return; // it did not start: start() threw, naming why
      }
      try {
        broker.stop();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @AfterEach
  void closeClients() {
    if (publisher != null) {
      publisher.close();
    }
    if (deadLetterReader != null) {
      deadLetterReader.close(Duration.ofSeconds(10));
    }
  }

  @Override
  String destination() {
    return "billing-kafka";
  }

  @Override
  void publish(String operationId, String payload) throws Exception {
    if (publisher == null) {
      publisher = new BillingKafka(bootstrapServers);
    }
    publisher.publish(operationId, payload);
  }

  @Override
  List<String> deadLettered(String operationId) {
    if (deadLetterReader == null) {
      deadLetterReader =
          new KafkaConsumer<>(
              Map.of(
                  ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                  bootstrapServers,
                  ConsumerConfig.GROUP_ID_CONFIG,
                  "dead-letter-reader-" + operationId,
                  ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                  "earliest"),
              new ByteArrayDeserializer(),
              new ByteArrayDeserializer());
      deadLetterReader.subscribe(List.of(BillingKafka.DEAD_LETTER_TOPIC));
    }
    deadLetterReader.poll(Duration.ofMillis(500)).forEach(deadLetters::add);
    List<String> payloads = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : deadLetters) {
      Header h = r.headers().lastHeader(KafkaDeliveries.OPERATION_ID_HEADER);
      if (h != null && operationId.equals(new String(h.value(), StandardCharsets.UTF_8))) {
        payloads.add(new String(r.value(), StandardCharsets.UTF_8));
      }
    }
    return payloads;
  }
}
