package dev.outboxrelay.relay.tracing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.LongString;
import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.testing.KafkaBroker;
import dev.outboxrelay.relay.chaos.ChaosExperiment;
import dev.outboxrelay.relay.testing.Conditions;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

/**
 * docs/relay.md "Tracing", with the OpenTelemetry SDK off (the packaged relay's default): the
 * {@code traceparent} and {@code tracestate} stored with a job reach the HTTP receiver, the Kafka
 * record and the AMQP message byte for byte, and a job that stored none is delivered without either
 * header. (With the SDK on, {@link DeliveryTracingTest} checks that each sink gets the delivery
 * span's {@code traceparent} instead.)
 */
class TraceparentForwardingIT {
  static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  static final String TRACESTATE = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE";

  @Test
  void withTheSdkOffEachSinkGetsTheStoredContextUnchangedAndNoneWhenNoneWasStored()
      throws Exception {
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String exchange = "outbox-trace-it-" + suffix;
    String queue = "outbox-trace-it-" + suffix;
    String topic = "trace.it";
    ConnectionFactory rabbit = new ConnectionFactory();
    rabbit.setHost("127.0.0.1");
    rabbit.setPort(5672);
    KafkaBroker kafka = KafkaBroker.shared();
    try (RecordingHttpReceiver receiver = new RecordingHttpReceiver();
        ChaosExperiment x = ChaosExperiment.start("traceparent-sdk-off");
        com.rabbitmq.client.Connection conn = rabbit.newConnection();
        Channel ch = conn.createChannel()) {
      kafka.createTopic(topic);
      ch.exchangeDeclare(exchange, "topic", true);
      ch.queueDeclare(queue, true, false, false, null);
      ch.queueBind(queue, exchange, "trace");
      Map<String, String> config = new HashMap<>();
      config.put("outbox.destinations.hook.type", "http");
      config.put("outbox.destinations.hook.url", receiver.url("/hook").toString());
      config.put("outbox.destinations.events.type", "kafka");
      config.put("outbox.destinations.events.topic", topic);
      config.put("kafka.bootstrap.servers", kafka.bootstrapServers());
      config.put("outbox.destinations.mails.type", "rabbitmq");
      config.put("outbox.destinations.mails.exchange", exchange);
      config.put("outbox.destinations.mails.routing-key", "trace");
      config.put("rabbitmq-host", "127.0.0.1");
      config.put("rabbitmq-port", "5672");
      x.startRelay(config);

      Outbox outbox =
          new Outbox(OutboxConfig.builder().destinations("hook", "events", "mails").build());
      try (Connection c = x.dataSource().getConnection()) {
        c.setAutoCommit(false);
        for (String d : List.of("hook", "events", "mails")) {
          outbox.enqueue(
              c,
              OutboxMessage.builder()
                  .operationId(d + "-stored")
                  .destination(d)
                  .payload("{}")
                  .header("traceparent", TRACEPARENT)
                  .header("tracestate", TRACESTATE)
                  .build());
          outbox.enqueue(
              c,
              OutboxMessage.builder()
                  .operationId(d + "-none")
                  .destination(d)
                  .payload("{}")
                  .build());
        }
        c.commit();
      }
      x.awaitCondition(
          "6 jobs delivered", Duration.ofSeconds(90), () -> x.count("state = 'S'") == 6);

      // HTTP: request headers as received.
      assertEquals(TRACEPARENT, receiver.requestsFor("hook-stored").get(0).header("traceparent"));
      assertEquals(TRACESTATE, receiver.requestsFor("hook-stored").get(0).header("tracestate"));
      assertNull(receiver.requestsFor("hook-none").get(0).header("traceparent"));
      assertNull(receiver.requestsFor("hook-none").get(0).header("tracestate"));

      // Kafka: record header bytes.
      Map<String, ConsumerRecord<String, String>> records = consume(kafka, topic, 2);
      assertEquals(
          Set.of("events-stored", "events-none"),
          records.keySet(),
          "Kafka records by operation id");
      assertArrayEquals(
          bytes(TRACEPARENT),
          value(records.get("events-stored").headers().lastHeader("traceparent")));
      assertArrayEquals(
          bytes(TRACESTATE),
          value(records.get("events-stored").headers().lastHeader("tracestate")));
      assertNull(records.get("events-none").headers().lastHeader("traceparent"));
      assertNull(records.get("events-none").headers().lastHeader("tracestate"));

      // AMQP: message header bytes (long strings).
      Map<String, GetResponse> messages = new HashMap<>();
      x.awaitCondition(
          "2 AMQP messages",
          Duration.ofSeconds(30),
          () -> {
            try {
              GetResponse r = ch.basicGet(queue, true);
              if (r != null) {
                messages.put(r.getProps().getMessageId(), r);
              }
              return messages.size() == 2;
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
      Map<String, Object> stored = messages.get("mails-stored").getProps().getHeaders();
      assertArrayEquals(bytes(TRACEPARENT), ((LongString) stored.get("traceparent")).getBytes());
      assertArrayEquals(bytes(TRACESTATE), ((LongString) stored.get("tracestate")).getBytes());
      Map<String, Object> none = messages.get("mails-none").getProps().getHeaders();
      assertNull(none.get("traceparent"));
      assertNull(none.get("tracestate"));
      System.out.println(
          "TRACE sdk=off http/kafka/amqp traceparent forwarded as stored: "
              + TRACEPARENT
              + "; none added to the 3 jobs that stored none");
    } finally {
      try (com.rabbitmq.client.Connection conn = rabbit.newConnection();
          Channel ch = conn.createChannel()) {
        ch.queueDelete(queue);
        ch.exchangeDelete(exchange);
      }
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(Header h) {
    return h == null ? null : h.value();
  }

  private static Map<String, ConsumerRecord<String, String>> consume(
      KafkaBroker broker, String topic, int n) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    Map<String, ConsumerRecord<String, String>> byOp = new HashMap<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
              .map(i -> new TopicPartition(i.topic(), i.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Conditions.collect(
          Duration.ofSeconds(60),
          Duration.ofMillis(10),
          Duration.ZERO,
          () -> {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
              byOp.put(
                  new String(
                      r.headers().lastHeader("operation-id").value(), StandardCharsets.UTF_8),
                  r);
            }
          },
          () -> byOp.size() >= n);
    }
    return byOp;
  }
}
