/**
 * Trace context at enqueue: {@link TraceContextSource} reads the caller's active span, and the
 * library stores it as the job headers {@code traceparent} and {@code tracestate} (W3C Trace
 * Context), unless the caller set {@code traceparent} itself. The relay starts each delivery's span
 * as a child of that context and forwards its own {@code traceparent} to the sink. OpenTelemetry is
 * optional: without its API on the class path nothing is stored.
 */
package dev.outboxrelay.outbox.trace;
