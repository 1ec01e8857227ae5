package dev.outboxrelay.demo.sink;

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
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
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
  private static final String TOPIC = "billing";
  private static final String DEAD_LETTER_TOPIC = "billing-dlq";

  @ConfigProperty(name = "kafka.bootstrap.servers") String bootstrapServers;

  private KafkaProducer<byte[], byte[]> producer;
  private final List<ConsumerRecord<byte[], byte[]>> deadLetters = new ArrayList<>();
  private KafkaConsumer<byte[], byte[]> deadLetterReader;

  /** A fresh KRaft broker with the channel's topics, retry topics and dead-letter topic created. */
  public static class Broker implements QuarkusTestResourceLifecycleManager {
    private KafkaBroker broker;

    @Override
    public Map<String, String> start() {
      try {
        broker = KafkaBroker.startFresh(Path.of("target", "kafka-billing-consumers"));
        for (String topic : List.of(TOPIC, "billing_retry_2000", "billing_retry_10000", DEAD_LETTER_TOPIC)) {
          broker.createTopic(topic);
        }
      } catch (Exception e) {
        throw new IllegalStateException("the Kafka broker did not start", e);
      }
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
    if (producer != null) {
      producer.close(Duration.ofSeconds(10));
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
    if (producer == null) {
      producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
          ProducerConfig.ACKS_CONFIG, "all"), new ByteArraySerializer(), new ByteArraySerializer());
    }
    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(TOPIC,
        operationId.getBytes(StandardCharsets.UTF_8), payload.getBytes(StandardCharsets.UTF_8));
    r.headers().add("operation-id", operationId.getBytes(StandardCharsets.UTF_8));
    producer.send(r).get();
  }

  @Override
  List<String> deadLettered(String operationId) {
    if (deadLetterReader == null) {
      deadLetterReader = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
          ConsumerConfig.GROUP_ID_CONFIG, "dead-letter-reader-" + operationId,
          ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new ByteArrayDeserializer(), new ByteArrayDeserializer());
      deadLetterReader.subscribe(List.of(DEAD_LETTER_TOPIC));
    }
    deadLetterReader.poll(Duration.ofMillis(500)).forEach(deadLetters::add);
    List<String> payloads = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : deadLetters) {
      Header h = r.headers().lastHeader("operation-id");
      if (h != null && operationId.equals(new String(h.value(), StandardCharsets.UTF_8))) {
        payloads.add(new String(r.value(), StandardCharsets.UTF_8));
      }
    }
    return payloads;
  }
}
