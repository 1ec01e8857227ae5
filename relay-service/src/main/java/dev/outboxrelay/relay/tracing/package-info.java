/**
 * Tracing of deliveries: {@link DeliveryTracing} runs each delivery attempt in a span that is a
 * child of the trace context stored with the job at enqueue, and hands the sink the job carrying
 * that span's {@code traceparent}. The claim loop itself is not traced (no span per poll); see
 * docs/relay.md "Tracing".
 */
package dev.outboxrelay.relay.tracing;
