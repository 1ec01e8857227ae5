package dev.outboxrelay.outbox.testing;

import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Prints exported spans as {@code TRACE ...} lines, one per span in start order, so a test's output
 * shows the trace it asserted: trace id, span id, parent span id ({@code -} for a root), kind, name
 * and attributes.
 */
public final class TraceLines {
  private TraceLines() {}

  public static List<String> of(List<SpanData> spans) {
    return spans.stream()
        .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
        .map(TraceLines::line)
        .toList();
  }

  public static void print(String title, List<SpanData> spans) {
    System.out.println("TRACE --- " + title);
    of(spans).forEach(System.out::println);
  }

  static String line(SpanData s) {
    return line(
        s.getTraceId(),
        s.getSpanId(),
        s.getParentSpanContext().isValid() ? s.getParentSpanId() : null,
        s.getKind().name(),
        s.getStatus().getStatusCode().name(),
        s.getName(),
        s.getAttributes().asMap().entrySet().stream()
            .collect(
                Collectors.toMap(e -> e.getKey().getKey(), e -> String.valueOf(e.getValue()))));
  }

  /**
   * One span's line from its parts (e.g. decoded from OTLP); {@code parentSpanId} null for a root.
   */
  public static String line(
      String traceId,
      String spanId,
      String parentSpanId,
      String kind,
      String status,
      String name,
      java.util.Map<String, String> attributes) {
    String attrs =
        attributes.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue())
            .sorted()
            .collect(Collectors.joining(" "));
    return "TRACE trace="
        + traceId
        + " span="
        + spanId
        + " parent="
        + (parentSpanId == null ? "-" : parentSpanId)
        + " kind="
        + kind
        + " status="
        + status
        + " name=\""
        + name
        + "\""
        + (attrs.isEmpty() ? "" : " " + attrs);
  }
}
