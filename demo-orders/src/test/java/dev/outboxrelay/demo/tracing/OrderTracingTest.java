package dev.outboxrelay.demo.tracing;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.demo.DemoDatabase;
import dev.outboxrelay.outbox.testing.TraceLines;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.specification.RequestSpecification;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /orders} runs in a span that quarkus-opentelemetry starts (real SDK, in-memory
 * exporter), and the order's outbox job stores that span's W3C context: its {@code traceparent}
 * names the request's trace and the request span as parent, which the relay's delivery span then
 * continues. Prints the exported request span as a {@code TRACE} line.
 */
@QuarkusTest
@TestProfile(OrderTracingTest.Traced.class)
class OrderTracingTest {
  /** An upstream caller's context, as a gateway or another service would send it. */
  static final String CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

  static final String CALLER_SPAN = "00f067aa0ba902b7";

  /** The SDK on for this class only. */
  public static class Traced implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "quarkus.otel.sdk.disabled", "false", "quarkus.otel.bsp.schedule.delay", "20ms");
    }
  }

  /** Quarkus exports to every SpanExporter bean, and installs no OTLP exporter beside one. */
  @ApplicationScoped
  static class Exporter {
    @Produces
    @Singleton
    InMemorySpanExporter exporter() {
      return InMemorySpanExporter.create();
    }
  }

  @Inject InMemorySpanExporter exporter;
  @Inject DemoDatabase db;
  @Inject ObjectMapper json;

  @Test
  void theJobStoresTheRequestSpanOfACallersTrace() throws Exception {
    String operationId =
        placeOrder(
            given()
                .header("traceparent", "00-" + CALLER_TRACE + "-" + CALLER_SPAN + "-01")
                .header("tracestate", "rojo=00f067aa0ba902b7"));
    SpanData request = requestSpan(CALLER_TRACE);
    assertEquals(
        CALLER_SPAN, request.getParentSpanId(), "the request continues the caller's trace");

    Map<String, String> headers = headersOf(operationId);
    assertEquals(
        "00-" + CALLER_TRACE + "-" + request.getSpanId() + "-01", headers.get("traceparent"));
    assertEquals("rojo=00f067aa0ba902b7", headers.get("tracestate"));
    TraceLines.print(
        "POST /orders (stored " + operationId + " traceparent=" + headers.get("traceparent") + ")",
        List.of(request));
  }

  @Test
  void aRequestWithoutACallerStartsTheTraceTheJobStores() throws Exception {
    String operationId = placeOrder(given());
    String traceparent = headersOf(operationId).get("traceparent");
    String traceId = traceparent.split("-")[1];
    SpanData request = requestSpan(traceId);
    assertFalse(request.getParentSpanContext().isValid(), "a root span: " + request);
    assertEquals("00-" + traceId + "-" + request.getSpanId() + "-01", traceparent);
  }

  private static String placeOrder(RequestSpecification request) {
    return request
        .contentType("application/json")
        .body("{\"customer\":\"Trace\",\"amountCents\":4200}")
        .post("/orders")
        .then()
        .statusCode(201)
        .extract()
        .path("operationId");
  }

  /** The exported server span of {@code POST /orders} in this trace. */
  private SpanData requestSpan(String traceId) {
    return Awaitility.await("server span of POST /orders in trace " + traceId)
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                exporter.getFinishedSpanItems().stream()
                    .filter(
                        s ->
                            s.getTraceId().equals(traceId)
                                && s.getKind() == SpanKind.SERVER
                                && s.getName().equals("POST /orders"))
                    .findFirst()
                    .orElse(null),
            java.util.Objects::nonNull);
  }

  private Map<String, String> headersOf(String operationId) throws Exception {
    return json.readValue(
        db.outbox().findByOperationId(operationId).orElseThrow().headersJson(),
        new TypeReference<>() {});
  }
}
