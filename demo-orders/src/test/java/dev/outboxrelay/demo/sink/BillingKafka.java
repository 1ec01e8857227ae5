package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.messaging.KafkaDeliveries;
import dev.outboxrelay.outbox.testing.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Kafka side of the billing consumer tests ({@link BillingConsumersKafkaTest}, {@link
 * BillingConsumersKafkaKillIT}): a fresh broker with the topics of the channel {@code
 * billing-kafka} as application.properties configures it, and a publisher that writes records as
 * the relay's Kafka sink does.
 */
final class BillingKafka implements AutoCloseable {
  static final String TOPIC = "billing";
  static final String DEAD_LETTER_TOPIC = "billing-dlq";

  /** The channel's topic, its delayed retry topics and its dead-letter topic. */
  private static final List<String> TOPICS =
      List.of(TOPIC, "billing_retry_2000", "billing_retry_10000", DEAD_LETTER_TOPIC);

  private final KafkaProducer<byte[], byte[]> producer;

  BillingKafka(String bootstrapServers) {
    producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ProducerConfig.ACKS_CONFIG,
                "all"),
            new ByteArraySerializer(),
            new ByteArraySerializer());
  }

  /** A fresh KRaft broker under {@code dir} with the channel's topics created. */
  static KafkaBroker startBroker(Path dir) {
    KafkaBroker broker = null;
    try {
      broker = KafkaBroker.startFresh(dir);
      for (String topic : TOPICS) {
        broker.createTopic(topic);
      }
      return broker;
    } catch (Exception e) {
      if (broker != null) {
        try {
          broker.stop();
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      throw new IllegalStateException("the Kafka broker did not start", e);
    }
  }

  /**
   * Publishes {@code payload} to {@link #TOPIC} keyed and headed ({@code operation-id}) by {@code
   * operationId}, as the relay's Kafka sink does; returns once the broker has it.
   */
  RecordMetadata publish(String operationId, String payload) throws Exception {
    byte[] op = operationId.getBytes(StandardCharsets.UTF_8);
    ProducerRecord<byte[], byte[]> r =
        new ProducerRecord<>(TOPIC, op, payload.getBytes(StandardCharsets.UTF_8));
    r.headers().add(KafkaDeliveries.OPERATION_ID_HEADER, op);
    return producer.send(r).get();
  }

  @Override
  public void close() {
    producer.close(Duration.ofSeconds(10));
  }
}
