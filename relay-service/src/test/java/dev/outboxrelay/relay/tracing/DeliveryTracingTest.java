package dev.outboxrelay.relay.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.testing.TraceLines;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.testing.Conditions;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * One trace from the enqueuing span to each sink, with the real OpenTelemetry SDK and its in-memory
 * exporter: a span stands for the request that enqueues (as {@code POST /orders} does in
 * demo-orders) and the library stores its context; the relay's delivery span is a child of that
 * stored context; and the HTTP receiver, the Kafka record and the RabbitMQ message carry a {@code
 * traceparent} with the same trace id whose parent is the delivery span. A retry is a second child
 * of the same parent, and the failed attempt's span has status ERROR. Prints the exported trace as
 * {@code TRACE} lines.
 */
@QuarkusTest
@TestProfile(DeliveryTracingTest.Traced.class)
class DeliveryTracingTest {
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String HTTP = "traced-http";
  static final String KAFKA = "traced-kafka";
  static final String RABBIT = "traced-rabbit";
  static final AttributeKey<String> OPERATION_ID =
      AttributeKey.stringKey(DeliveryTracing.OPERATION_ID);

  /** The relay with the SDK on and the three traced destinations (TracingTestResources). */
  public static class Traced implements QuarkusTestProfile {
    @Override
    public List<TestResourceEntry> testResources() {
      return List.of(new TestResourceEntry(TracingTestResources.class));
    }
  }

  @Inject Tracer tracer;
  @Inject InMemorySpanExporter exporter;
  @Inject RelayService relay;

  final Outbox outbox =
      new Outbox(OutboxConfig.builder().destinations(HTTP, KAFKA, RABBIT).build());
  final String run = UUID.randomUUID().toString().substring(0, 8);

  @Test
  void oneTraceFromTheEnqueuingSpanThroughTheDeliveryToEachSink() throws Exception {
    ConnectionFactory rabbit = rabbit();
    String queue = "outbox-trace-" + run;
    try (com.rabbitmq.client.Connection conn = rabbit.newConnection();
        Channel ch = conn.createChannel()) {
      ch.exchangeDeclare("outbox", "topic", true);
      ch.queueDeclare(queue, false, false, true, null);
      ch.queueBind(queue, "outbox", TracingTestResources.ROUTING_KEY);
    }
    String httpOp = "trace-http-" + run;
    String kafkaOp = "trace-kafka-" + run;
    String rabbitOp = "trace-rabbit-" + run;
    Span request = enqueueInSpan(httpOp, HTTP, kafkaOp, KAFKA, rabbitOp, RABBIT);
    String traceId = request.getSpanContext().getTraceId();

    SpanData httpSpan = deliverySpans(httpOp, 1).get(0);
    SpanData kafkaSpan = deliverySpans(kafkaOp, 1).get(0);
    SpanData rabbitSpan = deliverySpans(rabbitOp, 1).get(0);
    assertDelivery(httpSpan, request, HTTP, SpanKind.CLIENT, 1, "sent");
    assertDelivery(kafkaSpan, request, KAFKA, SpanKind.PRODUCER, 1, "sent");
    assertDelivery(rabbitSpan, request, RABBIT, SpanKind.PRODUCER, 1, "sent");

    // What each sink received continues the trace, with the delivery span as parent.
    RecordingHttpReceiver.Request received =
        TracingTestResources.receiver.requestsFor(httpOp).get(0);
    assertEquals(traceparent(httpSpan), received.header("traceparent"));
    assertEquals(traceparent(kafkaSpan), kafkaHeader(kafkaOp, "traceparent"));
    GetResponse message = take(rabbit, queue);
    assertEquals(rabbitOp, message.getProps().getMessageId());
    assertEquals(
        traceparent(rabbitSpan),
        String.valueOf(message.getProps().getHeaders().get("traceparent")));
    assertEquals(
        "00-" + traceId + "-" + httpSpan.getSpanId() + "-01", received.header("traceparent"));

    // The relay's spans are its deliveries: polling the database all along exported none.
    List<SpanData> all = exporter.getFinishedSpanItems();
    for (SpanData s : all) {
      assertTrue(
          s.getName().startsWith(DeliveryTracing.SPAN_NAME + " ")
              || s.getName().startsWith("test "),
          "unexpected span: " + s);
    }
    TraceLines.print(
        "enqueue -> relay -> HTTP / Kafka / RabbitMQ",
        all.stream().filter(s -> s.getTraceId().equals(traceId)).toList());
    System.out.println("TRACE http receiver got traceparent=" + received.header("traceparent"));
    System.out.println(
        "TRACE kafka record header traceparent=" + kafkaHeader(kafkaOp, "traceparent"));
    System.out.println(
        "TRACE rabbitmq message header traceparent="
            + message.getProps().getHeaders().get("traceparent"));
  }

  @Test
  void aRetryIsAnotherChildOfTheStoredContextAndFailuresAreErrors() throws Exception {
    String retried = "trace-retry-" + run;
    String dead = "trace-dead-" + run;
    TracingTestResources.receiver.script(retried, RecordingHttpReceiver.Response.status(503));
    TracingTestResources.receiver.script(dead, RecordingHttpReceiver.Response.status(400));
    Span request = enqueueInSpan(retried, HTTP, dead, HTTP);

    List<SpanData> attempts = deliverySpans(retried, 2);
    assertDelivery(attempts.get(0), request, HTTP, SpanKind.CLIENT, 1, "retry");
    assertEquals(StatusCode.ERROR, attempts.get(0).getStatus().getStatusCode());
    assertEquals(
        "HTTP 503", attempts.get(0).getAttributes().get(AttributeKey.stringKey("error.type")));
    assertDelivery(attempts.get(1), request, HTTP, SpanKind.CLIENT, 2, "sent");
    List<RecordingHttpReceiver.Request> requests =
        TracingTestResources.receiver.requestsFor(retried);
    assertEquals(traceparent(attempts.get(0)), requests.get(0).header("traceparent"));
    assertEquals(
        traceparent(attempts.get(1)),
        requests.get(1).header("traceparent"),
        "each attempt its own span");

    SpanData deadSpan = deliverySpans(dead, 1).get(0);
    assertDelivery(deadSpan, request, HTTP, SpanKind.CLIENT, 1, "dead");
    assertEquals(StatusCode.ERROR, deadSpan.getStatus().getStatusCode());
    assertTrue(
        deadSpan.getStatus().getDescription().contains("answered 400"),
        deadSpan.getStatus().toString());
    TraceLines.print(
        "a retried and a dead delivery",
        exporter.getFinishedSpanItems().stream()
            .filter(s -> s.getTraceId().equals(request.getSpanContext().getTraceId()))
            .toList());
  }

  @Test
  void aJobEnqueuedWithoutASpanStartsItsOwnTrace() throws Exception {
    String op = "trace-none-" + run;
    try (Connection c = relay.dataSource().getConnection()) {
      outbox.enqueue(c, job(op, HTTP)); // auto-commit, no span active
    }
    SpanData span = deliverySpans(op, 1).get(0);
    assertFalse(span.getParentSpanContext().isValid(), "a root span: " + span);
    assertEquals("sent", span.getAttributes().get(AttributeKey.stringKey(DeliveryTracing.OUTCOME)));
    assertEquals(
        traceparent(span),
        TracingTestResources.receiver.requestsFor(op).get(0).header("traceparent"));
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** Enqueues jobs (pairs of operation ID and destination) in one transaction under a span. */
  private Span enqueueInSpan(String... opsAndDestinations) throws Exception {
    Span request = tracer.spanBuilder("test POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
    try (Scope ignored = request.makeCurrent();
        Connection c = relay.dataSource().getConnection()) {
      c.setAutoCommit(false);
      for (int i = 0; i < opsAndDestinations.length; i += 2) {
        outbox.enqueue(c, job(opsAndDestinations[i], opsAndDestinations[i + 1]));
      }
      c.commit();
    } finally {
      request.end();
    }
    return request;
  }

  private static OutboxMessage job(String op, String destination) {
    return OutboxMessage.builder()
        .operationId(op)
        .destination(destination)
        .payload("{\"op\":\"" + op + "\"}")
        .build();
  }

  /** The delivery spans of one job, in attempt order, once {@code count} were exported. */
  private List<SpanData> deliverySpans(String op, int count) {
    List<SpanData> found = new ArrayList<>();
    Awaitility.await(op + ": " + count + " delivery span(s)")
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              found.clear();
              exporter.getFinishedSpanItems().stream()
                  .filter(s -> op.equals(s.getAttributes().get(OPERATION_ID)))
                  .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
                  .forEach(found::add);
              return found.size() >= count;
            });
    return found;
  }

  private static void assertDelivery(
      SpanData s, Span parent, String destination, SpanKind kind, long attempt, String outcome) {
    assertEquals(parent.getSpanContext().getTraceId(), s.getTraceId(), "same trace: " + s);
    assertEquals(
        parent.getSpanContext().getSpanId(),
        s.getParentSpanId(),
        "child of the stored context: " + s);
    assertEquals(DeliveryTracing.SPAN_NAME + " " + destination, s.getName());
    assertEquals(kind, s.getKind());
    assertEquals(
        destination, s.getAttributes().get(AttributeKey.stringKey(DeliveryTracing.DESTINATION)));
    assertEquals(attempt, s.getAttributes().get(AttributeKey.longKey(DeliveryTracing.ATTEMPT)));
    assertEquals(outcome, s.getAttributes().get(AttributeKey.stringKey(DeliveryTracing.OUTCOME)));
    assertNotNull(s.getAttributes().get(AttributeKey.longKey(DeliveryTracing.MESSAGE_ID)));
    if (outcome.equals("sent")) {
      assertEquals(StatusCode.UNSET, s.getStatus().getStatusCode());
    }
  }

  private static String traceparent(SpanData s) {
    return "00-" + s.getTraceId() + "-" + s.getSpanId() + "-01";
  }

  private static ConnectionFactory rabbit() {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setHost("127.0.0.1");
    factory.setPort(5672);
    return factory;
  }

  private static GetResponse take(ConnectionFactory factory, String queue) throws Exception {
    try (com.rabbitmq.client.Connection conn = factory.newConnection();
        Channel ch = conn.createChannel()) {
      return Awaitility.await("a message on " + queue)
          .atMost(WAIT)
          .pollInterval(Duration.ofMillis(50))
          .until(() -> ch.basicGet(queue, true), Objects::nonNull);
    }
  }

  /** The header of the record for {@code op} on the test topic (read from the beginning). */
  private static String kafkaHeader(String op, String header) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TracingTestResources.kafka.bootstrapServers());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(TracingTestResources.TOPIC, WAIT).stream()
              .map(i -> new TopicPartition(i.topic(), i.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      AtomicReference<ConsumerRecord<String, String>> found = new AtomicReference<>();
      Conditions.collect(
          WAIT,
          Duration.ofMillis(10),
          Duration.ZERO,
          () -> {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
              var operation = r.headers().lastHeader("operation-id");
              if (operation != null
                  && op.equals(new String(operation.value(), StandardCharsets.UTF_8))) {
                found.set(r);
              }
            }
          },
          () -> found.get() != null);
      if (found.get() == null) {
        throw new AssertionError(
            "no record for " + op + " on " + TracingTestResources.TOPIC + " within " + WAIT);
      }
      var h = found.get().headers().lastHeader(header);
      return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
  }
}
