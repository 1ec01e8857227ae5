package dev.outboxrelay.outbox.trace;

import java.util.Map;

/**
 * Where {@link dev.outboxrelay.outbox.Outbox#enqueue} reads the trace context it stores in a job's
 * headers, so that the relay's delivery continues the trace of the request that enqueued it.
 *
 * <p>Contract: {@link #current()} is called once per enqueue call (once for a whole {@code
 * enqueueAll}), on the caller's thread, inside the caller's transaction. It returns the W3C Trace
 * Context headers of the span active on that thread ({@value #TRACEPARENT} and, when non-empty,
 * {@value #TRACESTATE}), or an empty map when no span is active: then nothing is stored. It must be
 * fast, must not throw and must not touch the database.
 *
 * <p>{@link #detect()} picks {@link OpenTelemetryTraceContext} when the OpenTelemetry API is on the
 * class path, and {@link #NONE} otherwise: the library never requires OpenTelemetry. Supply your
 * own (another tracer) with {@code new Outbox(config, source)}, or a CDI bean of this type for
 * {@code TransactionalOutbox}.
 */
@FunctionalInterface
public interface TraceContextSource {
  /** W3C Trace Context header carrying trace id, parent span id and flags. */
  String TRACEPARENT = "traceparent";

  /** W3C Trace Context header carrying vendor-specific state. */
  String TRACESTATE = "tracestate";

  /**
   * A longer {@value #TRACESTATE} is not stored (W3C allows dropping it; 512 characters hold its 32
   * list members), so the trace headers stay small whatever a vendor puts there.
   */
  int MAX_TRACESTATE_LENGTH = 512;

  /** Stores nothing. */
  TraceContextSource NONE = Map::of;

  /** The trace headers of the active span; empty when none is active. */
  Map<String, String> current();

  /**
   * {@link OpenTelemetryTraceContext} when the OpenTelemetry API is present, else {@link #NONE}.
   */
  static TraceContextSource detect() {
    return detect(TraceContextSource.class.getClassLoader());
  }

  /** As {@link #detect()}, looking for the OpenTelemetry API in {@code loader}. */
  static TraceContextSource detect(ClassLoader loader) {
    try {
      Class.forName("io.opentelemetry.api.trace.Span", false, loader);
      Class.forName("io.opentelemetry.context.Context", false, loader);
    } catch (ClassNotFoundException | LinkageError absent) {
      return NONE;
    }
    // Only now is the class that links against the OpenTelemetry API loaded.
    return new OpenTelemetryTraceContext();
  }
}
