package dev.outboxrelay.relay.tracing;

import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.trace.TraceContextSource;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.HttpSink;
import dev.outboxrelay.relay.sink.KafkaSink;
import dev.outboxrelay.relay.sink.MessageSink;
import dev.outboxrelay.relay.sink.RabbitMqSink;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.sink.SinkResult;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * One span per delivery attempt, continuing the trace stored with the job at enqueue.
 *
 * <p>The span ({@code outbox deliver <destination>}) is a <em>child</em> of the job's stored W3C
 * context ({@code traceparent}/{@code tracestate} headers), so the enqueuing request, every attempt
 * and the sink's own spans form one trace; each retry is one more child of the same parent. Without
 * a stored context it starts a new trace. Kind: {@code CLIENT} for HTTP, {@code PRODUCER} for Kafka
 * and RabbitMQ, {@code INTERNAL} otherwise. Attributes: {@value #MESSAGE_ID}, {@value
 * #OPERATION_ID}, {@value #DESTINATION}, {@value #ATTEMPT}, {@value #OUTCOME} ({@code sent}, {@code
 * retry}, {@code dead}, {@code stale}, or {@code released} on shutdown), and on a failed attempt
 * status ERROR with the sink's error and {@code error.type}.
 *
 * <p>Propagation: every sink forwards job headers (HTTP request headers, Kafka record headers, AMQP
 * message headers). With the SDK on, {@link Delivery#message()} is the job with its trace headers
 * replaced by the delivery span's, so the receiver's parent is this span (a job that stored none
 * gets the new root span's). With the SDK off ({@code quarkus.otel.sdk.disabled=true}, the default,
 * or {@code quarkus.otel.traces.enabled=false}) nothing is recorded and {@link Delivery#message()}
 * is the job as stored: its {@code traceparent} and {@code tracestate} byte for byte, and none when
 * it stored none, so the receiver joins the enqueuing trace directly. (Quarkus' tracer with the SDK
 * disabled still mints span ids; forwarding those would point receivers at spans nobody records.)
 *
 * <p>Thread-safe; a {@link Delivery} belongs to the worker delivering its job.
 */
public final class DeliveryTracing {
  public static final String MESSAGE_ID = "outbox.message.id";
  public static final String OPERATION_ID = "outbox.operation.id";
  public static final String DESTINATION = "outbox.destination";
  public static final String ATTEMPT = "outbox.attempt";
  public static final String OUTCOME = "outbox.outcome";

  /** The span name's prefix; the destination follows. */
  public static final String SPAN_NAME = "outbox deliver";

  /** The instrumentation scope of the relay's spans. */
  public static final String SCOPE = "dev.outboxrelay.relay";

  private static final AttributeKey<Long> MESSAGE_ID_KEY = AttributeKey.longKey(MESSAGE_ID);
  private static final AttributeKey<String> OPERATION_ID_KEY = AttributeKey.stringKey(OPERATION_ID);
  private static final AttributeKey<String> DESTINATION_KEY = AttributeKey.stringKey(DESTINATION);
  private static final AttributeKey<Long> ATTEMPT_KEY = AttributeKey.longKey(ATTEMPT);
  private static final AttributeKey<String> OUTCOME_KEY = AttributeKey.stringKey(OUTCOME);
  private static final AttributeKey<String> ERROR_TYPE_KEY = AttributeKey.stringKey("error.type");
  private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

  /** Records nothing and forwards the stored context as it is (benchmarks, tools). */
  public static final DeliveryTracing OFF =
      new DeliveryTracing(
          OpenTelemetry.noop().getTracer(SCOPE), destination -> SpanKind.INTERNAL, false);

  private final Tracer tracer;
  private final Function<String, SpanKind> kindOf;

  /** False: the sink gets the job's stored trace headers unchanged (SDK off). */
  private final boolean propagateSpan;

  /** With the delivery span's context forwarded to the sink (the SDK is on). */
  public DeliveryTracing(Tracer tracer, Function<String, SpanKind> kindOf) {
    this(tracer, kindOf, true);
  }

  DeliveryTracing(Tracer tracer, Function<String, SpanKind> kindOf, boolean propagateSpan) {
    this.tracer = tracer;
    this.kindOf = kindOf;
    this.propagateSpan = propagateSpan;
  }

  /**
   * Span kinds from the configured sinks; whether the SDK is on from the configuration ({@code
   * quarkus.otel.sdk.disabled}, {@code quarkus.otel.traces.enabled}).
   */
  public static DeliveryTracing of(Tracer tracer, SinkRegistry sinks) {
    var config = ConfigProvider.getConfig();
    boolean sdkOn =
        !config.getOptionalValue("quarkus.otel.sdk.disabled", Boolean.class).orElse(false)
            && config.getOptionalValue("quarkus.otel.traces.enabled", Boolean.class).orElse(true);
    return new DeliveryTracing(
        tracer,
        destination ->
            sinks.forDestination(destination).map(DeliveryTracing::kind).orElse(SpanKind.INTERNAL),
        sdkOn);
  }

  static SpanKind kind(MessageSink sink) {
    if (sink instanceof HttpSink) {
      return SpanKind.CLIENT;
    }
    return sink instanceof KafkaSink || sink instanceof RabbitMqSink
        ? SpanKind.PRODUCER
        : SpanKind.INTERNAL;
  }

  /** Starts the attempt's span; end it with {@link Delivery#end}. */
  public Delivery start(ClaimedJob m) {
    Context stored = W3C.extract(Context.root(), m.headers(), HEADERS);
    Span span =
        tracer
            .spanBuilder(SPAN_NAME + " " + m.destination())
            .setParent(stored)
            .setSpanKind(kindOf.apply(m.destination()))
            .setAttribute(MESSAGE_ID_KEY, m.id())
            .setAttribute(OPERATION_ID_KEY, m.operationId())
            .setAttribute(DESTINATION_KEY, m.destination())
            .setAttribute(ATTEMPT_KEY, (long) m.attemptNo())
            .startSpan();
    return new Delivery(
        span, propagateSpan && span.getSpanContext().isValid() ? withTraceOf(span, m) : m);
  }

  /** One attempt's span and the job as the sink gets it. */
  public static final class Delivery {
    private final Span span;
    private final ClaimedJob message;

    private Delivery(Span span, ClaimedJob forSink) {
      this.span = span;
      this.message = forSink;
    }

    /**
     * The job for the sink: carrying this span's {@code traceparent} (and {@code tracestate}) with
     * the SDK on, as stored with it off.
     */
    public ClaimedJob message() {
      return message;
    }

    /** The span, for tests and logs. */
    public Span span() {
      return span;
    }

    /**
     * Ends the span with the recorded outcome.
     *
     * @param outcome what was recorded ({@code DELIVERED} is the attribute {@code sent}, the others
     *     their metrics tag), or null when no try to record it got an answer ({@code unknown})
     * @param result the sink's answer, or null when there was none
     */
    public void end(AttemptOutcome outcome, SinkResult result) {
      span.setAttribute(
          OUTCOME_KEY,
          outcome == AttemptOutcome.DELIVERED ? "sent" : RelayMetrics.outcomeTag(outcome));
      if (result instanceof SinkResult.RetryLater r) {
        failed(r.errorClass(), r.error());
      } else if (result instanceof SinkResult.PermanentFailure p) {
        failed(p.errorClass(), p.error());
      }
      span.end();
    }

    /**
     * Ends the span of an attempt that ended without a recording: the job was given back
     * (shutdown).
     */
    public void released() {
      span.setAttribute(OUTCOME_KEY, "released");
      span.end();
    }

    private void failed(String errorClass, String error) {
      span.setAttribute(ERROR_TYPE_KEY, errorClass);
      span.setStatus(StatusCode.ERROR, error);
    }
  }

  /** Drops the stored trace headers (whatever their case) and adds the span's. */
  private static ClaimedJob withTraceOf(Span span, ClaimedJob m) {
    Map<String, String> headers = new LinkedHashMap<>();
    m.headers()
        .forEach(
            (name, value) -> {
              if (!name.equalsIgnoreCase(TraceContextSource.TRACEPARENT)
                  && !name.equalsIgnoreCase(TraceContextSource.TRACESTATE)) {
                headers.put(name, value);
              }
            });
    W3C.inject(Context.root().with(span), headers, Map::put);
    return new ClaimedJob(
        m.id(),
        m.operationId(),
        m.destination(),
        m.orderingKey(),
        m.payload(),
        m.contentType(),
        headers,
        m.attempts(),
        m.claimToken(),
        m.createdAt(),
        m.leaseUntil(),
        m.payloadByReference());
  }

  /**
   * Reads stored headers by name, ignoring case (a caller may have written {@code Traceparent}).
   */
  private static final TextMapGetter<Map<String, String>> HEADERS =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          if (carrier == null) {
            return null;
          }
          String exact = carrier.get(key);
          if (exact != null) {
            return exact;
          }
          for (Map.Entry<String, String> e : carrier.entrySet()) {
            if (e.getKey().equalsIgnoreCase(key)) {
              return e.getValue();
            }
          }
          return null;
        }
      };
}
