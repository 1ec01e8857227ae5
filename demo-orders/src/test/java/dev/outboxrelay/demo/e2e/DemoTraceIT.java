package dev.outboxrelay.demo.e2e;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.outboxrelay.demo.e2e.OtlpReceiver.ReceivedSpan;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TraceLines;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One trace from {@code POST /orders} to the sink, across the two packaged services running as
 * processes (as bin/demo runs them), with tracing turned on the documented way (SDK on, OTLP
 * endpoint) and exported to a test collector ({@link OtlpReceiver}): demo-orders' request span →
 * (the job stores its traceparent) → the relay's delivery span, a child of it → the demo sink's
 * request span for that delivery, a child of the delivery span. Prints the trace as {@code TRACE}
 * lines.
 */
class DemoTraceIT {
  static OtlpReceiver collector;
  static DemoStack stack;
  static ServiceProcess demo;

  @BeforeAll
  static void startServices() throws Exception {
    collector = new OtlpReceiver();
    DemoStack.Settings tracing =
        new DemoStack.Settings(
            Map.of(
                "quarkus.otel.sdk.disabled", "false",
                "quarkus.otel.exporter.otlp.traces.endpoint", collector.endpoint().toString(),
                "quarkus.otel.exporter.otlp.traces.protocol", "http/protobuf",
                "quarkus.otel.bsp.schedule.delay", "100ms"),
            Map.of());
    stack = DemoStack.start("demo-trace-it", tracing, demoUri -> tracing);
    demo = stack.demo;
  }

  @AfterAll
  static void stopServices() throws Exception {
    try {
      if (stack != null) {
        stack.close();
      }
    } finally {
      if (collector != null) {
        collector.close();
      }
    }
  }

  @Test
  void oneTraceFromPostOrdersThroughTheRelayToTheSink() {
    String operationId =
        given()
            .baseUri(demo.baseUri().toString())
            .contentType("application/json")
            .body("{\"customer\":\"traced\",\"amountCents\":4200}")
            .post("/orders")
            .then()
            .statusCode(201)
            .extract()
            .path("operationId");
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () ->
                given()
                    .baseUri(demo.baseUri().toString())
                    .get("/demo/report")
                    .then()
                    .statusCode(200)
                    .body("outbox.S", equalTo(1)));

    ReceivedSpan delivery =
        await(
            "the relay's delivery span of " + operationId,
            () ->
                collector.spans().stream()
                    .filter(s -> operationId.equals(s.attributes().get("outbox.operation.id")))
                    .findFirst());
    String traceId = delivery.traceId();
    ReceivedSpan order =
        await(
            "the POST /orders span",
            () ->
                inTrace(traceId).stream().filter(s -> s.name().equals("POST /orders")).findFirst());
    ReceivedSpan sink =
        await(
            "the sink's request span",
            () ->
                inTrace(traceId).stream()
                    .filter(s -> s.name().startsWith("POST /sink"))
                    .findFirst());

    assertEquals("demo-orders", order.service());
    assertEquals("SERVER", order.kind());
    assertNull(order.parentSpanId(), "the order request starts the trace");
    assertEquals("outbox-relay", delivery.service());
    assertEquals("outbox deliver billing", delivery.name());
    assertEquals("CLIENT", delivery.kind());
    assertEquals(
        order.spanId(), delivery.parentSpanId(), "delivery is a child of the enqueuing request");
    assertEquals("sent", delivery.attributes().get("outbox.outcome"));
    assertEquals("1", delivery.attributes().get("outbox.attempt"));
    assertEquals("demo-orders", sink.service());
    assertEquals("SERVER", sink.kind());
    assertEquals(
        delivery.spanId(), sink.parentSpanId(), "the sink's request continues the delivery span");
    // No span per claim poll: the relay, polling all along, exported only its delivery.
    assertEquals(
        List.of(delivery),
        collector.spans().stream().filter(s -> "outbox-relay".equals(s.service())).toList(),
        "the relay's spans");

    System.out.println(
        "TRACE --- POST /orders -> relay -> sink, exported over OTLP by both services");
    inTrace(traceId).stream()
        .sorted(Comparator.comparing(s -> s == order ? 0 : s == delivery ? 1 : 2))
        .forEach(
            s ->
                System.out.println(
                    TraceLines.line(
                        s.traceId(),
                        s.spanId(),
                        s.parentSpanId(),
                        s.kind(),
                        s.status(),
                        s.name(),
                        DemoStack.merge(
                            Map.of("service", String.valueOf(s.service())),
                            pick(s.attributes())))));
  }

  private static List<ReceivedSpan> inTrace(String traceId) {
    return collector.spans().stream().filter(s -> s.traceId().equals(traceId)).toList();
  }

  private static ReceivedSpan await(
      String what, java.util.concurrent.Callable<Optional<ReceivedSpan>> find) {
    return Awaitility.await(what)
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .until(find, Optional::isPresent)
        .orElseThrow();
  }

  /** The attributes worth a line: ours and the HTTP route. */
  private static Map<String, String> pick(Map<String, String> attributes) {
    Map<String, String> picked = new java.util.TreeMap<>();
    attributes.forEach(
        (k, v) -> {
          if (k.startsWith("outbox.")
              || k.equals("http.route")
              || k.equals("http.response.status_code")) {
            picked.put(k, v);
          }
        });
    return picked;
  }
}
