package dev.outboxrelay.relay.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP endpoint on loopback that records every request and answers from a script: per
 * operation ID (Idempotency-Key) a queue of responses, then 200. Applies each operation ID once
 * (like an idempotent receiver) and counts repeats. A path can be set to require a valid
 * {@code X-Outbox-Signature} under a given secret, answering 401 (before the script) otherwise.
 */
public final class RecordingHttpReceiver implements AutoCloseable {
  /** One scripted answer; {@code delayMillis} stalls before answering. */
  public record Response(int status, Map<String, String> headers, String body, long delayMillis) {
    public static Response status(int status) {
      return new Response(status, Map.of(), "", 0);
    }

    public static Response slow(long delayMillis) {
      return new Response(200, Map.of(), "ok", delayMillis);
    }
  }

  /** One request as received. */
  public record Request(String path, Map<String, List<String>> headers, String body, long receivedNanos) {
    public String header(String name) {
      return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
          .map(e -> e.getValue().get(0)).findFirst().orElse(null);
    }
  }

  static {
    // Without TCP_NODELAY the JDK server's separate header and body writes meet the client's
    // delayed ACK and every response stalls ~40ms.
    System.setProperty("sun.net.httpserver.nodelay", "true");
  }

  private final HttpServer server;
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final Map<String, Deque<Response>> script = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> applied = new ConcurrentHashMap<>();
  private volatile Response defaultResponse = Response.status(200);
  private final Map<String, byte[]> signatureSecrets = new ConcurrentHashMap<>();

  public RecordingHttpReceiver() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(Executors.newCachedThreadPool());
    server.start();
  }

  public URI url(String path) {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
  }

  /** Answers the next requests for {@code operationId} with these responses, in order. */
  public void script(String operationId, Response... responses) {
    script.computeIfAbsent(operationId, k -> new ArrayDeque<>()).addAll(List.of(responses));
  }

  /** Requests to {@code path} must carry a signature valid under {@code secret}, else 401. */
  public void requireSignature(String path, byte[] secret) {
    signatureSecrets.put(path, secret);
  }

  public void defaultResponse(Response r) {
    defaultResponse = r;
  }

  private void handle(HttpExchange ex) throws IOException {
    try (InputStream in = ex.getRequestBody()) {
      byte[] raw = in.readAllBytes();
      String body = new String(raw, StandardCharsets.UTF_8);
      String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
      requests.add(new Request(ex.getRequestURI().getPath(), Map.copyOf(ex.getRequestHeaders()), body,
          System.nanoTime()));
      Deque<Response> queue = key == null ? null : script.get(key);
      Response r = null;
      byte[] secret = signatureSecrets.get(ex.getRequestURI().getPath());
      if (secret != null) {
        WebhookSignature.Verification v = WebhookSignature.verify(secret,
            ex.getRequestHeaders().getFirst(WebhookSignature.HEADER), raw, Instant.now(),
            WebhookSignature.DEFAULT_TOLERANCE);
        if (!v.valid()) {
          r = new Response(401, Map.of("Content-Type", "application/problem+json"),
              "{\"title\":\"Unauthorized\",\"status\":401,\"reason\":\"" + v.reason() + "\"}", 0);
        }
      }
      if (r == null && queue != null) {
        synchronized (queue) {
          r = queue.poll();
        }
      }
      if (r == null) {
        r = defaultResponse;
      }
      if (r.delayMillis() > 0) {
        Thread.sleep(r.delayMillis());
      }
      if (r.status() / 100 == 2 && key != null) {
        applied.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      }
      r.headers().forEach((k, v) -> ex.getResponseHeaders().add(k, v));
      byte[] bytes = r.body().getBytes(StandardCharsets.UTF_8);
      ex.sendResponseHeaders(r.status(), bytes.length == 0 ? -1 : bytes.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(bytes);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      ex.close();
    }
  }

  public List<Request> requests() {
    return List.copyOf(requests);
  }

  public List<Request> requestsFor(String operationId) {
    return requests.stream().filter(r -> operationId.equals(r.header("Idempotency-Key"))).toList();
  }

  /** How many 2xx answers this operation ID got (deliveries accepted). */
  public int acceptedCount(String operationId) {
    AtomicInteger n = applied.get(operationId);
    return n == null ? 0 : n.get();
  }

  public void reset() {
    requests.clear();
    script.clear();
    applied.clear();
    signatureSecrets.clear();
    defaultResponse = Response.status(200);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
