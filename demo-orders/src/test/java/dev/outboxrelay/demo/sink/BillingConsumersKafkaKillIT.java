package dev.outboxrelay.demo.sink;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.outbox.testing.KafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * {@link BillingConsumersKillContract} on Kafka: a fresh KRaft broker, the receiver under the
 * config profile {@code kafka}. Besides the effects it checks the consumer group's committed
 * offsets while an acknowledgement is held back: the connector's default commit strategy ({@code
 * throttled}, with auto-commit off) commits the offsets of acknowledged records only, so the
 * group's offset in the held-back record's partition rises to that record and stops there, and
 * every record below a committed offset has its invoice. The receiver's consumer session is 6 s
 * (the client's default 45 s would make the group wait that long for each killed member before the
 * next receiver gets its partitions); nothing else of the channel is changed.
 */
class BillingConsumersKafkaKillIT extends BillingConsumersKillContract {
  private static final String CHANNEL = "%kafka.mp.messaging.incoming.billing-kafka.";

  /**
   * The channel sets no {@code group.id}, so Quarkus names the group after the application ({@code
   * quarkus.application.name}, the artifact id): the same for every receiver, which resumes from
   * the offsets the one before committed. (The delayed retry topics have a group of their own.)
   */
  private static final String GROUP = "demo-orders";

  private KafkaBroker broker;
  private BillingKafka publisher;
  private Admin admin;

  /** The operation ID of every published record, by partition and offset. */
  private final Map<TopicPartition, NavigableMap<Long, String>> records = new HashMap<>();

  @Override
  String destination() {
    return "billing-kafka";
  }

  @Override
  String configProfile() {
    return "kafka";
  }

  @Override
  void startBroker(Path work) {
    broker = BillingKafka.startBroker(work.resolve("kafka"));
    publisher = new BillingKafka(broker.bootstrapServers());
    admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
  }

  @Override
  Map<String, String> brokerSettings() {
    return Map.of(
        "kafka.bootstrap.servers",
        broker.bootstrapServers(),
        CHANNEL + "session.timeout.ms",
        "6000",
        CHANNEL + "heartbeat.interval.ms",
        "1000");
  }

  @Override
  void awaitConsuming() {
    // The topics exist and the channel reads from the earliest offset: records published now are
    // read.
  }

  @Override
  void publish(String operationId, String payload) throws Exception {
    RecordMetadata m = publisher.publish(operationId, payload);
    records
        .computeIfAbsent(new TopicPartition(m.topic(), m.partition()), tp -> new TreeMap<>())
        .put(m.offset(), operationId);
  }

  @Override
  void whileHeldBack(String where, DataSource db) throws Exception {
    TopicPartition tp =
        new TopicPartition(
            where.substring(0, where.lastIndexOf('-')),
            Integer.parseInt(where.substring(where.lastIndexOf('-') + 1, where.indexOf('@'))));
    long offset = Long.parseLong(where.substring(where.indexOf('@') + 1));
    assertEquals(BillingKafka.TOPIC, tp.topic(), "the held-back record's topic");
    await(
            "the group's offset of "
                + tp
                + " committed up to the held-back record "
                + offset
                + ", not past it")
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              long committed = committed().getOrDefault(tp, 0L);
              if (committed > offset) {
                throw new IllegalStateException(
                    "offset "
                        + committed
                        + " of "
                        + tp
                        + " committed while record "
                        + offset
                        + " is not acknowledged");
              }
              return committed == offset;
            });
    committed()
        .forEach(
            (partition, committed) ->
                records
                    .get(partition)
                    .headMap(committed)
                    .forEach(
                        (o, op) ->
                            assertEquals(
                                1,
                                invoices(db, op),
                                "record "
                                    + partition
                                    + "@"
                                    + o
                                    + " ("
                                    + op
                                    + ") is below the committed offset "
                                    + committed
                                    + ": its invoice committed first")));
  }

  @Override
  boolean drained() throws Exception {
    Map<TopicPartition, Long> committed = committed();
    return records.entrySet().stream()
        .allMatch(e -> committed.getOrDefault(e.getKey(), 0L) == e.getValue().lastKey() + 1);
  }

  /** The offsets the receivers' consumer group committed in the billing topic. */
  private Map<TopicPartition, Long> committed() throws Exception {
    Map<TopicPartition, Long> offsets = new HashMap<>();
    admin
        .listConsumerGroupOffsets(GROUP)
        .partitionsToOffsetAndMetadata()
        .get(10, TimeUnit.SECONDS)
        .forEach(
            (tp, o) -> {
              if (o != null && tp.topic().equals(BillingKafka.TOPIC)) {
                offsets.put(tp, o.offset());
              }
            });
    return offsets;
  }

  @Override
  void stopBroker() throws Exception {
    if (admin != null) {
      admin.close(Duration.ofSeconds(10));
    }
    if (publisher != null) {
      publisher.close();
    }
    if (broker != null) {
      broker.stop();
    }
  }
}
