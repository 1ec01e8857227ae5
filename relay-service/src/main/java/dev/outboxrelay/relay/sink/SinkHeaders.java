package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedJob;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The headers a broker message carries: the job's own, then the relay's (which win on a name clash,
 * so a job cannot forge its operation ID): {@code operation-id}, {@code outbox-message-id}, {@code
 * outbox-attempt}, {@code content-type}. The job's own include its {@code traceparent}/{@code
 * tracestate}: the delivery attempt's span with OpenTelemetry on, as stored with it off (the
 * tracing package's {@code DeliveryTracing}).
 */
final class SinkHeaders {
  private SinkHeaders() {}

  static Map<String, String> of(ClaimedJob m) {
    Map<String, String> headers = new LinkedHashMap<>(m.headers());
    headers.put("operation-id", m.operationId());
    headers.put("outbox-message-id", Long.toString(m.id()));
    headers.put("outbox-attempt", Integer.toString(m.attemptNo()));
    headers.put("content-type", m.contentType());
    return headers;
  }
}
