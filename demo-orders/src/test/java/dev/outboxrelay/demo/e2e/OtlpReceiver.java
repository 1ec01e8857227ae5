package dev.outboxrelay.demo.e2e;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A collector for tests: accepts OTLP/HTTP protobuf trace exports ({@code POST /v1/traces}) from
 * services running as processes and keeps the spans. It decodes only the fields a test asserts
 * (ids, parent, name, kind, status, string/int attributes, the resource's {@code service.name}),
 * reading the protobuf wire format directly so that no OTLP classes are needed.
 */
final class OtlpReceiver implements AutoCloseable {
  /** One exported span. {@code parentSpanId} is null for a root span. */
  record ReceivedSpan(
      String service,
      String traceId,
      String spanId,
      String parentSpanId,
      String name,
      String kind,
      String status,
      Map<String, String> attributes) {}

  private static final String[] KINDS = {
    "UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"
  };
  private static final String[] STATUS = {"UNSET", "OK", "ERROR"};

  private final HttpServer server;
  private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();

  OtlpReceiver() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/v1/traces",
        ex -> {
          try (InputStream in = ex.getRequestBody()) {
            readRequest(in.readAllBytes());
            ex.getResponseHeaders().add("Content-Type", "application/x-protobuf");
            ex.sendResponseHeaders(200, -1); // an empty ExportTraceServiceResponse
          } catch (RuntimeException e) {
            ex.sendResponseHeaders(400, -1);
          } finally {
            ex.close();
          }
        });
    server.start();
  }

  /** The base endpoint to configure as {@code quarkus.otel.exporter.otlp.traces.endpoint}. */
  URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  List<ReceivedSpan> spans() {
    return List.copyOf(spans);
  }

  @Override
  public void close() {
    server.stop(0);
  }

  // ExportTraceServiceRequest { 1: repeated ResourceSpans }
  private void readRequest(byte[] body) {
    Wire w = new Wire(body);
    while (w.more()) {
      int tag = w.tag();
      if (tag >>> 3 == 1) {
        readResourceSpans(w.bytes());
      } else {
        w.skip(tag);
      }
    }
  }

  // ResourceSpans { 1: Resource, 2: repeated ScopeSpans }; Resource { 1: repeated KeyValue }
  private void readResourceSpans(byte[] bytes) {
    Wire w = new Wire(bytes);
    String service = null;
    List<byte[]> scopes = new java.util.ArrayList<>();
    while (w.more()) {
      int tag = w.tag();
      if (tag >>> 3 == 1) {
        Map<String, String> resource = new LinkedHashMap<>();
        Wire r = new Wire(w.bytes());
        while (r.more()) {
          int t = r.tag();
          if (t >>> 3 == 1) {
            readKeyValue(r.bytes(), resource);
          } else {
            r.skip(t);
          }
        }
        service = resource.get("service.name");
      } else if (tag >>> 3 == 2) {
        scopes.add(w.bytes());
      } else {
        w.skip(tag);
      }
    }
    for (byte[] scope : scopes) {
      Wire s = new Wire(scope); // ScopeSpans { 2: repeated Span }
      while (s.more()) {
        int t = s.tag();
        if (t >>> 3 == 2) {
          spans.add(readSpan(service, s.bytes()));
        } else {
          s.skip(t);
        }
      }
    }
  }

  // Span { 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 9 attributes, 15 status { 3
  // code } }
  private static ReceivedSpan readSpan(String service, byte[] bytes) {
    Wire w = new Wire(bytes);
    String traceId = null;
    String spanId = null;
    String parent = null;
    String name = null;
    int kind = 0;
    int status = 0;
    Map<String, String> attributes = new LinkedHashMap<>();
    while (w.more()) {
      int tag = w.tag();
      switch (tag >>> 3) {
        case 1 -> traceId = HexFormat.of().formatHex(w.bytes());
        case 2 -> spanId = HexFormat.of().formatHex(w.bytes());
        case 4 -> {
          byte[] p = w.bytes();
          parent = p.length == 0 ? null : HexFormat.of().formatHex(p);
        }
        case 5 -> name = new String(w.bytes(), StandardCharsets.UTF_8);
        case 6 -> kind = (int) w.varint();
        case 9 -> readKeyValue(w.bytes(), attributes);
        case 15 -> {
          Wire s = new Wire(w.bytes());
          while (s.more()) {
            int t = s.tag();
            if (t >>> 3 == 3) {
              status = (int) s.varint();
            } else {
              s.skip(t);
            }
          }
        }
        default -> w.skip(tag);
      }
    }
    return new ReceivedSpan(
        service, traceId, spanId, parent, name, KINDS[kind], STATUS[status], attributes);
  }

  // KeyValue { 1 key, 2 AnyValue { 1 string_value, 2 bool_value, 3 int_value, 4 double_value } }
  private static void readKeyValue(byte[] bytes, Map<String, String> into) {
    Wire w = new Wire(bytes);
    String key = null;
    String value = null;
    while (w.more()) {
      int tag = w.tag();
      if (tag >>> 3 == 1) {
        key = new String(w.bytes(), StandardCharsets.UTF_8);
      } else if (tag >>> 3 == 2) {
        Wire v = new Wire(w.bytes());
        while (v.more()) {
          int t = v.tag();
          switch (t >>> 3) {
            case 1 -> value = new String(v.bytes(), StandardCharsets.UTF_8);
            case 2 -> value = String.valueOf(v.varint() != 0);
            case 3 -> value = String.valueOf(v.varint());
            case 4 -> value = String.valueOf(Double.longBitsToDouble(v.fixed64()));
            default -> v.skip(t);
          }
        }
      } else {
        w.skip(tag);
      }
    }
    if (key != null && value != null) {
      into.put(key, value);
    }
  }

  /** Protobuf wire format reader: varints, 64/32-bit fixed and length-delimited fields. */
  private static final class Wire {
    private final ByteBuffer buf;

    Wire(byte[] bytes) {
      buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    boolean more() {
      return buf.hasRemaining();
    }

    int tag() {
      return (int) varint();
    }

    long varint() {
      long result = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        byte b = buf.get();
        result |= (long) (b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
          return result;
        }
      }
      throw new IllegalArgumentException("malformed varint");
    }

    long fixed64() {
      return buf.getLong();
    }

    byte[] bytes() {
      byte[] b = new byte[(int) varint()];
      buf.get(b);
      return b;
    }

    void skip(int tag) {
      switch (tag & 7) {
        case 0 -> varint();
        case 1 -> buf.position(buf.position() + 8);
        case 2 -> bytes();
        case 5 -> buf.position(buf.position() + 4);
        default -> throw new IllegalArgumentException("unsupported wire type " + (tag & 7));
      }
    }
  }
}
