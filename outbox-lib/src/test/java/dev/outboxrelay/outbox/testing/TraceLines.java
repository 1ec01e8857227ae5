package dev.outboxrelay.outbox.testing;

import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Prints exported spans as {@code TRACE ...} lines, one per span in start order, so a test's
 * output shows the trace it asserted: trace id, span id, parent span id ({@code -} for a root),
 * kind, name and attributes.
 */
public final class TraceLines {
  private TraceLines() {}

  public static List<String> of(List<SpanData> spans) {
    return spans.stream().sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
        .map(TraceLines::line).toList();
  }

  public static void print(String title, List<SpanData> spans) {
    System.out.println("TRACE --- " + title);
    of(spans).forEach(System.out::println);
  }

  static String line(SpanData s) {
    String parent = s.getParentSpanContext().isValid() ? s.getParentSpanId() : "-";
    String attributes = s.getAttributes().asMap().entrySet().stream()
        .map(e -> e.getKey().getKey() + "=" + e.getValue())
        .sorted().collect(Collectors.joining(" "));
    return "TRACE trace=" + s.getTraceId() + " span=" + s.getSpanId() + " parent=" + parent
        + " kind=" + s.getKind() + " status=" + s.getStatus().getStatusCode() + " name=\"" + s.getName()
        + "\"" + (attributes.isEmpty() ? "" : " " + attributes);
  }
}
