package dev.outboxrelay.outbox.trace;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads the current OpenTelemetry context ({@link Context#current()}, which Quarkus binds to the
 * request) and writes it as W3C Trace Context headers. Always W3C, whatever propagators the
 * application configured: the relay reads exactly these two headers. Needs {@code
 * io.opentelemetry:opentelemetry-api} at run time; load it only through {@link
 * TraceContextSource#detect()}, which checks for it.
 */
public final class OpenTelemetryTraceContext implements TraceContextSource {

  @Override
  public Map<String, String> current() {
    Context context = Context.current();
    if (!Span.fromContext(context).getSpanContext().isValid()) {
      return Map.of();
    }
    Map<String, String> headers = new LinkedHashMap<>();
    W3CTraceContextPropagator.getInstance().inject(context, headers, Map::put);
    String state = headers.get(TRACESTATE);
    if (state != null && (state.isEmpty() || state.length() > MAX_TRACESTATE_LENGTH)) {
      headers.remove(TRACESTATE);
    }
    return headers;
  }
}
