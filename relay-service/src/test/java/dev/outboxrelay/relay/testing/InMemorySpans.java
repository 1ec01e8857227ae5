package dev.outboxrelay.relay.testing;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The OpenTelemetry SDK's in-memory exporter as a CDI bean: Quarkus exports spans to every {@code
 * SpanExporter} bean (and then installs no OTLP exporter). Spans exist only where a test turns the
 * SDK on ({@code quarkus.otel.sdk.disabled=false}); elsewhere this stays empty.
 */
@ApplicationScoped
public class InMemorySpans {
  @Produces
  @Singleton
  InMemorySpanExporter exporter() {
    return InMemorySpanExporter.create();
  }
}
