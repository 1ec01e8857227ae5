package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.LongString;
import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.testing.KafkaBroker;
import dev.outboxrelay.relay.testing.Conditions;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * What enqueue accepts reaches a broker byte-for-byte: operation IDs made of every printable ASCII
 * character, IDs that differ only in case, spaces or a {@code ?}, header values with tab or empty,
 * and a content type with quotes, enqueued through the library, delivered by a relay process, read
 * back as raw bytes from a Kafka topic (record key and {@code operation-id} header) and from a
 * RabbitMQ queue (AMQP {@code message-id} and {@code operation-id} header). Two distinct IDs never
 * arrive as one.
 */
class SinkWireFidelityIT {
  /** The exchange the relay's RabbitMQ channel publishes to (application.properties). */
  static final String EXCHANGE = "outbox";

  /** Every printable ASCII character, a space inside but at neither end. */
  static final String EVERY_PRINTABLE;

  static {
    StringBuilder b = new StringBuilder("!");
    for (char ch = 0x20; ch <= 0x7e; ch++) {
      b.append(ch);
    }
    EVERY_PRINTABLE = b.append('~').toString();
  }

  static final String CONTENT_TYPE = "text/plain; charset=\"utf-8\"; x=~!#";
  static final Map<String, String> HEADERS = headers();

  private static Map<String, String> headers() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("X-All", EVERY_PRINTABLE);
    h.put("X-Tab", "a\tb\t c");
    h.put("X-Empty", "");
    return h;
  }

  /** The IDs to send, each with a suffix that keeps runs apart where the broker is shared. */
  private static List<String> ids(String suffix) {
    List<String> ids = new ArrayList<>();
    for (String base :
        List.of(
            EVERY_PRINTABLE.substring(0, 90),
            "a?b",
            "A?b",
            "a b",
            "a  b",
            "order-1",
            "Order-1",
            "\"q\" \\ %C3%A4")) {
      ids.add(base + " " + suffix);
    }
    ids.add("x".repeat(OutboxConfig.MAX_OPERATION_ID_LENGTH - suffix.length()) + suffix);
    return ids;
  }

  private static void enqueue(ChaosExperiment x, String destination, List<String> ids)
      throws Exception {
    Outbox outbox = new Outbox(OutboxConfig.builder().destinations(destination).build());
    try (Connection c = x.dataSource().getConnection()) {
      c.setAutoCommit(false);
      for (String id : ids) {
        outbox.enqueue(
            c,
            OutboxMessage.builder()
                .operationId(id)
                .destination(destination)
                .payload("Zo\u00eb " + id)
                .contentType(CONTENT_TYPE)
                .headers(HEADERS)
                .build());
      }
      c.commit();
    }
    x.awaitCondition(
        ids.size() + " jobs sent",
        Duration.ofSeconds(90),
        () -> x.count("state = 'S'") == ids.size());
  }

  @Test
  void kafkaRecordsCarryTheIdAsKeyAndHeaderAndTheHeadersByteForByte() throws Exception {
    String topic = "wire.events";
    KafkaBroker broker = KafkaBroker.shared();
    try (ChaosExperiment x = ChaosExperiment.start("sink-wire-kafka")) {
      broker.createTopic(topic);
      x.startRelay(
          Map.of(
              "kafka.bootstrap.servers",
              broker.bootstrapServers(),
              "outbox.destinations.orders.type",
              "kafka",
              "outbox.destinations.orders.topic",
              topic,
              "outbox.destinations.orders.request-timeout",
              "8s"));
      List<String> ids = ids("k");
      enqueue(x, "orders", ids);

      Map<String, ConsumerRecord<byte[], byte[]>> byId = consume(broker, topic, ids.size());
      assertEquals(
          new TreeSet<>(ids), new TreeSet<>(byId.keySet()), "one record per ID, none merged");
      for (String id : ids) {
        ConsumerRecord<byte[], byte[]> r = byId.get(id);
        byte[] ascii = id.getBytes(StandardCharsets.US_ASCII);
        assertArrayEquals(ascii, r.key(), "key = operation ID: " + id);
        assertArrayEquals(ascii, header(r, "operation-id"), id);
        assertArrayEquals(bytes(EVERY_PRINTABLE), header(r, "X-All"), id);
        assertArrayEquals(bytes("a\tb\t c"), header(r, "X-Tab"), id);
        assertArrayEquals(new byte[0], header(r, "X-Empty"), id);
        assertArrayEquals(bytes(CONTENT_TYPE), header(r, "content-type"), id);
        assertEquals("Zo\u00eb " + id, new String(r.value(), StandardCharsets.UTF_8));
      }
    }
  }

  @Test
  void rabbitMqMessagesCarryTheIdAsMessageIdAndHeaderAndTheHeadersByteForByte() throws Exception {
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String queue = "outbox-wire-it-" + suffix;
    String routingKey = "it.wire." + suffix;
    ConnectionFactory factory = new ConnectionFactory();
    factory.setHost("127.0.0.1");
    factory.setPort(5672);
    try (ChaosExperiment x = ChaosExperiment.start("sink-wire-rabbitmq")) {
      try (com.rabbitmq.client.Connection conn = factory.newConnection();
          Channel ch = conn.createChannel()) {
        // Same exchange properties as the relay's channel declares (application.properties).
        ch.exchangeDeclare(EXCHANGE, "topic", true);
        ch.queueDeclare(queue, true, false, false, null);
        ch.queueBind(queue, EXCHANGE, routingKey);
      }
      x.startRelay(
          Map.of(
              "rabbitmq-host", "127.0.0.1",
              "rabbitmq-port", "5672",
              "rabbitmq-username", "guest",
              "rabbitmq-password", "guest",
              "outbox.destinations.emails.type", "rabbitmq",
              "outbox.destinations.emails.routing-key", routingKey,
              "outbox.destinations.emails.request-timeout", "5s"));
      List<String> ids = ids(suffix);
      enqueue(x, "emails", ids);

      Map<String, GetResponse> byId = drain(factory, queue, ids.size());
      assertEquals(
          new TreeSet<>(ids), new TreeSet<>(byId.keySet()), "one message per ID, none merged");
      for (String id : ids) {
        GetResponse r = byId.get(id);
        assertEquals(id, r.getProps().getMessageId());
        assertArrayEquals(id.getBytes(StandardCharsets.US_ASCII), header(r, "operation-id"), id);
        assertArrayEquals(bytes(EVERY_PRINTABLE), header(r, "X-All"), id);
        assertArrayEquals(bytes("a\tb\t c"), header(r, "X-Tab"), id);
        assertArrayEquals(new byte[0], header(r, "X-Empty"), id);
        assertEquals(CONTENT_TYPE, r.getProps().getContentType());
        assertEquals("Zo\u00eb " + id, new String(r.getBody(), StandardCharsets.UTF_8));
      }
    } finally {
      try (com.rabbitmq.client.Connection conn = factory.newConnection();
          Channel ch = conn.createChannel()) {
        ch.queueDelete(queue);
      }
    }
  }

  private static byte[] bytes(String ascii) {
    return ascii.getBytes(StandardCharsets.US_ASCII);
  }

  private static byte[] header(ConsumerRecord<byte[], byte[]> r, String name) {
    Header h = r.headers().lastHeader(name);
    assertNotNull(h, name + " on the record");
    return h.value();
  }

  /** An AMQP header's value as the bytes the broker delivered (a long string). */
  private static byte[] header(GetResponse r, String name) {
    Object v = r.getProps().getHeaders() == null ? null : r.getProps().getHeaders().get(name);
    assertNotNull(v, name + " on the message");
    return v instanceof LongString s ? s.getBytes() : v.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Reads the topic from the beginning until {@code distinct} IDs were seen, keyed by operation-id.
   */
  private static Map<String, ConsumerRecord<byte[], byte[]>> consume(
      KafkaBroker broker, String topic, int distinct) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    Map<String, ConsumerRecord<byte[], byte[]>> byId = new HashMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
              .map(i -> new TopicPartition(i.topic(), i.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      // consumer.poll waits up to 200 ms itself
      Conditions.collect(
          Duration.ofSeconds(60),
          Duration.ofMillis(1),
          Duration.ZERO,
          () -> {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
              byId.put(new String(header(r, "operation-id"), StandardCharsets.ISO_8859_1), r);
            }
          },
          () -> byId.size() >= distinct);
    }
    return byId;
  }

  /**
   * Takes messages (acknowledging them) until {@code distinct} IDs arrived, keyed by message-id.
   */
  private static Map<String, GetResponse> drain(
      ConnectionFactory factory, String queue, int distinct) throws Exception {
    Map<String, GetResponse> byId = new HashMap<>();
    try (com.rabbitmq.client.Connection conn = factory.newConnection();
        Channel ch = conn.createChannel()) {
      org.awaitility.Awaitility.await(distinct + " messages in " + queue)
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                for (GetResponse r = ch.basicGet(queue, true);
                    r != null;
                    r = ch.basicGet(queue, true)) {
                  byId.put(r.getProps().getMessageId(), r);
                }
                return byId.size() >= distinct;
              });
    }
    return byId;
  }
}
