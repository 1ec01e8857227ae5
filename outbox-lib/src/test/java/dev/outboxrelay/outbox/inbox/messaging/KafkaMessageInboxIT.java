package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.testing.KafkaBroker;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link MessageInbox} with {@link KafkaDeliveries} on a real KRaft broker: records carry the
 * headers the relay's Kafka sink writes ({@code operation-id}, {@code outbox-message-id}), an ack
 * commits the record's offset, a nack seeks back to it, a crash closes the consumer uncommitted.
 */
class KafkaMessageInboxIT extends MessageInboxContractTest {
  private static KafkaBroker broker;
  private static KafkaProducer<String, byte[]> producer;
  private String topic;
  private TopicPartition partition;
  private KafkaConsumer<String, byte[]> consumer;
  private Iterator<ConsumerRecord<String, byte[]>> polled =
      List.<ConsumerRecord<String, byte[]>>of().iterator();

  @BeforeAll
  static void startBroker() throws Exception {
    broker = KafkaBroker.startFresh(Path.of("target", "kafka-inbox"));
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  @AfterAll
  static void stopBroker() throws InterruptedException {
    if (producer != null) {
      producer.close(Duration.ofSeconds(5));
    }
    if (broker != null) {
      broker.close();
    }
  }

  @BeforeEach
  void topic() throws Exception {
    topic = "inbox-" + UUID.randomUUID();
    broker.createTopic(topic);
    partition = new TopicPartition(topic, 0);
    connect();
  }

  @AfterEach
  void closeConsumer() {
    consumer.close(Duration.ofSeconds(5));
  }

  private void connect() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "inbox-it-" + topic);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
    consumer.assign(List.of(partition));
    polled = List.<ConsumerRecord<String, byte[]>>of().iterator();
  }

  @Override
  String destination() {
    return "kafka:inbox-it";
  }

  @Override
  DeliveryReader reader() {
    return KafkaDeliveries.reader(destination());
  }

  @Override
  String expectedIdField() {
    return KafkaDeliveries.OPERATION_ID_HEADER;
  }

  @Override
  void publish(String operationId, String payload, long jobId) throws Exception {
    RecordHeaders headers = new RecordHeaders();
    if (operationId != null) {
      headers.add("operation-id", operationId.getBytes(StandardCharsets.UTF_8));
    }
    headers.add("outbox-message-id", Long.toString(jobId).getBytes(StandardCharsets.UTF_8));
    headers.add("content-type", "application/json".getBytes(StandardCharsets.UTF_8));
    producer
        .send(
            new ProducerRecord<>(
                topic, 0, operationId, payload.getBytes(StandardCharsets.UTF_8), headers))
        .get();
  }

  @Override
  Message<?> next() {
    if (!polled.hasNext()) {
      // consumer.poll waits up to 200 ms itself; the consumer is single-threaded: polled in this
      // thread
      polled =
          Awaitility.await("a record on " + topic)
              .atMost(Duration.ofSeconds(30))
              .pollInSameThread()
              .pollDelay(Duration.ZERO)
              .pollInterval(Duration.ofMillis(1))
              .until(() -> consumer.poll(Duration.ofMillis(200)).iterator(), Iterator::hasNext);
    }
    ConsumerRecord<String, byte[]> r = polled.next();
    return wrap(
        r.value(),
        new IncomingKafkaRecordMetadata<>(r, "orders"),
        () -> consumer.commitSync(Map.of(partition, new OffsetAndMetadata(r.offset() + 1))),
        () -> {
          consumer.seek(partition, r.offset()); // the failure strategy of a retrying consumer
          polled = List.<ConsumerRecord<String, byte[]>>of().iterator();
        });
  }

  @Override
  void crashAndReconnect() {
    consumer.close(Duration.ZERO);
    connect();
  }
}
