package dev.outboxrelay.outbox.trace;

import static dev.outboxrelay.outbox.testing.TestDatabases.HTTP_BILLING;
import static dev.outboxrelay.outbox.testing.TestDatabases.KAFKA_ORDERS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.EnqueueResult;
import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.testing.TestDatabases;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The library stores the enqueuing span's W3C trace context in the job's headers, with the real
 * OpenTelemetry SDK: only when a span is active, never over a caller's own traceparent, and without
 * needing OpenTelemetry at all when its API is absent.
 */
class TraceContextTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final InMemorySpanExporter EXPORTER = InMemorySpanExporter.create();
  private static final SdkTracerProvider PROVIDER =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(EXPORTER)).build();
  private static final Tracer TRACER = PROVIDER.get("trace-context-test");

  private final DataSource db = TestDatabases.h2();
  private final JdbcOutboxAdminStore admin = JdbcOutboxAdminStore.create(db);
  private final Outbox outbox =
      new Outbox(OutboxConfig.builder().destinations(HTTP_BILLING, KAFKA_ORDERS).build());

  @AfterAll
  static void closeSdk() {
    PROVIDER.close();
  }

  @Test
  void detectsTheOpenTelemetryApiAndWorksWithoutIt() {
    assertInstanceOf(OpenTelemetryTraceContext.class, TraceContextSource.detect());
    ClassLoader withoutOtel =
        new ClassLoader(TraceContextTest.class.getClassLoader()) {
          @Override
          protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("io.opentelemetry.")) {
              throw new ClassNotFoundException(name);
            }
            return super.loadClass(name, resolve);
          }
        };
    assertSame(TraceContextSource.NONE, TraceContextSource.detect(withoutOtel));
    assertEquals(Map.of(), TraceContextSource.NONE.current());
  }

  @Test
  void storesTheActiveSpansTraceparentAndTracestate() throws Exception {
    // A remote parent carrying vendor state, as an incoming request would have.
    SpanContext remote =
        SpanContext.createFromRemoteParent(
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "00f067aa0ba902b7",
            TraceFlags.getSampled(),
            TraceState.builder().put("rojo", "00f067aa0ba902b7").build());
    Span span =
        TRACER
            .spanBuilder("POST /orders")
            .setParent(Context.root().with(Span.wrap(remote)))
            .startSpan();
    long id;
    try (Scope ignored = span.makeCurrent()) {
      id = enqueue(message("order-1/billing").header("X-Tenant", "acme").build()).messageId();
    } finally {
      span.end();
    }
    Map<String, String> headers = headersOf(id);
    assertEquals("acme", headers.get("X-Tenant"), "the caller's headers are kept");
    assertEquals(
        "00-"
            + span.getSpanContext().getTraceId()
            + "-"
            + span.getSpanContext().getSpanId()
            + "-01",
        headers.get("traceparent"));
    assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", span.getSpanContext().getTraceId());
    assertEquals("rojo=00f067aa0ba902b7", headers.get("tracestate"));
  }

  @Test
  void storesNothingWhenNoSpanIsActive() throws Exception {
    long id = enqueue(message("order-2/billing").build()).messageId();
    assertNull(admin.findJob(id).orElseThrow().headersJson(), "no headers at all");
    long withHeader =
        enqueue(message("order-3/billing").header("X-Tenant", "acme").build()).messageId();
    assertEquals(Map.of("X-Tenant", "acme"), headersOf(withHeader));
  }

  @Test
  void aCallersTraceparentWins() throws Exception {
    String own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    Span span = TRACER.spanBuilder("request").startSpan();
    long id;
    try (Scope ignored = span.makeCurrent()) {
      id =
          enqueue(
                  message("order-4/billing")
                      .header("TraceParent", own)
                      .header("tracestate", "congo=t61rcWkgMzE")
                      .build())
              .messageId();
    } finally {
      span.end();
    }
    assertEquals(
        Map.of("TraceParent", own, "tracestate", "congo=t61rcWkgMzE"),
        headersOf(id),
        "the caller's trace context, untouched, and not the active span's");
  }

  @Test
  void fanOutJobsShareTheEnqueuingSpanAndTheHeaderLimitIsTheCallers() throws Exception {
    // The caller's headers use the whole limit: the trace headers come on top and are not refused.
    String big = "v".repeat(OutboxConfig.MAX_HEADERS_JSON_LENGTH - "{\"X-Big\":\"\"}".length());
    Span span = TRACER.spanBuilder("batch").startSpan();
    List<EnqueueResult> jobs;
    try (Scope ignored = span.makeCurrent();
        Connection c = db.getConnection()) {
      jobs =
          outbox.enqueueAll(
              c,
              OutboxMessage.fanOut(
                  "order-5",
                  OutboxMessage.builder().payload("{}").header("X-Big", big).build(),
                  List.of(HTTP_BILLING, KAFKA_ORDERS)));
    } finally {
      span.end();
    }
    String expected =
        "00-"
            + span.getSpanContext().getTraceId()
            + "-"
            + span.getSpanContext().getSpanId()
            + "-01";
    for (EnqueueResult job : jobs) {
      Map<String, String> headers = headersOf(job.messageId());
      assertEquals(expected, headers.get("traceparent"));
      assertEquals(big, headers.get("X-Big"));
      assertFalse(headers.containsKey("tracestate"), "an empty tracestate is not stored");
    }
  }

  @Test
  void anOverlongTracestateIsDropped() {
    TraceState state =
        TraceState.builder()
            .put("vendor", "x".repeat(TraceContextSource.MAX_TRACESTATE_LENGTH))
            .build();
    SpanContext remote =
        SpanContext.createFromRemoteParent(
            "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", TraceFlags.getSampled(), state);
    try (Scope ignored = Context.root().with(Span.wrap(remote)).makeCurrent()) {
      Map<String, String> headers = new OpenTelemetryTraceContext().current();
      assertEquals(
          Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
          headers);
    }
    assertTrue(
        new OpenTelemetryTraceContext().current().isEmpty(), "no span once the scope closed");
  }

  private EnqueueResult enqueue(OutboxMessage m) throws Exception {
    try (Connection c = db.getConnection()) {
      return outbox.enqueue(c, m);
    }
  }

  private static OutboxMessage.Builder message(String operationId) {
    return OutboxMessage.builder().operationId(operationId).destination(HTTP_BILLING).payload("{}");
  }

  private Map<String, String> headersOf(long id) throws Exception {
    return JSON.readValue(admin.findJob(id).orElseThrow().headersJson(), new TypeReference<>() {});
  }
}
