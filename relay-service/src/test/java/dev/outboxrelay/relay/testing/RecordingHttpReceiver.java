package dev.outboxrelay.relay.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.outboxrelay.outbox.testing.TimeSpans;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
 * (like an idempotent receiver) and counts repeats. A path can be set to require a valid {@code
 * X-Outbox-Signature} under a given secret, answering 401 (before the script) otherwise.
 *
 * <p>Like the demo sink it keeps a ledger of the operations it applied (first 2xx per key), served
 * at {@code GET /ledger?since=&limit=} in the demo's format ({@code LedgerResource}), which tests
 * can falsify: forget an application, apply one twice, add a ghost.
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
  public record Request(
      String path, Map<String, List<String>> headers, String body, long receivedNanos) {
    public String header(String name) {
      return headers.entrySet().stream()
          .filter(e -> e.getKey().equalsIgnoreCase(name))
          .map(e -> e.getValue().get(0))
          .findFirst()
          .orElse(null);
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
  private final Map<String, LedgerEntry> ledger = new ConcurrentHashMap<>();
  private volatile int ledgerStatus = 200;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One applied operation, as the demo sink's ledger lists it. */
  public record LedgerEntry(
      String operationId,
      String destination,
      Long messageId,
      Instant appliedAt,
      long deliveries,
      long appliedCount) {}

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
    if (ex.getRequestURI().getPath().equals("/ledger") && ex.getRequestMethod().equals("GET")) {
      serveLedger(ex);
      return;
    }
    try (InputStream in = ex.getRequestBody()) {
      byte[] raw = in.readAllBytes();
      String body = new String(raw, StandardCharsets.UTF_8);
      String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
      requests.add(
          new Request(
              ex.getRequestURI().getPath(),
              Map.copyOf(ex.getRequestHeaders()),
              body,
              System.nanoTime()));
      Deque<Response> queue = key == null ? null : script.get(key);
      Response r = null;
      byte[] secret = signatureSecrets.get(ex.getRequestURI().getPath());
      if (secret != null) {
        WebhookSignature.Verification v =
            WebhookSignature.verify(
                secret,
                ex.getRequestHeaders().getFirst(WebhookSignature.HEADER),
                raw,
                Instant.now(),
                WebhookSignature.DEFAULT_TOLERANCE);
        if (!v.valid()) {
          r =
              new Response(
                  401,
                  Map.of("Content-Type", "application/problem+json"),
                  "{\"title\":\"Unauthorized\",\"status\":401,\"reason\":\"" + v.reason() + "\"}",
                  0);
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
        TimeSpans.simulateWork(Duration.ofMillis(r.delayMillis())); // a slow receiver on cue
      }
      if (r.status() / 100 == 2 && key != null) {
        applied.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        String path = ex.getRequestURI().getPath();
        String messageId = ex.getRequestHeaders().getFirst("X-Outbox-Message-Id");
        ledger.compute(
            key,
            (k, e) ->
                e == null
                    ? new LedgerEntry(
                        key,
                        path.substring(path.lastIndexOf('/') + 1),
                        messageId == null ? null : Long.valueOf(messageId),
                        now(),
                        1,
                        1)
                    : new LedgerEntry(
                        k,
                        e.destination(),
                        e.messageId(),
                        e.appliedAt(),
                        e.deliveries() + 1,
                        e.appliedCount()));
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

  /**
   * {@code GET /ledger}: entries applied strictly after {@code since}, in appliedAt, operation ID
   * order, at most {@code limit} (default 100); {@code next} is the last entry's appliedAt when
   * more follow. A page is never cut inside a run of equal appliedAt (as in the demo sink).
   */
  private void serveLedger(HttpExchange ex) throws IOException {
    try (ex) {
      if (ledgerStatus != 200) {
        byte[] bytes = "ledger unavailable".getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(ledgerStatus, bytes.length);
        ex.getResponseBody().write(bytes);
        return;
      }
      Map<String, String> query = new java.util.HashMap<>();
      String raw = ex.getRequestURI().getRawQuery();
      if (raw != null) {
        for (String pair : raw.split("&")) {
          int eq = pair.indexOf('=');
          query.put(
              pair.substring(0, eq),
              java.net.URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
        }
      }
      Instant since =
          query.containsKey("since") ? Instant.parse(query.get("since")) : Instant.EPOCH;
      int limit = query.containsKey("limit") ? Integer.parseInt(query.get("limit")) : 100;
      List<LedgerEntry> after =
          ledger.values().stream()
              .filter(e -> e.appliedAt().isAfter(since))
              .sorted(
                  java.util.Comparator.comparing(LedgerEntry::appliedAt)
                      .thenComparing(LedgerEntry::operationId))
              .toList();
      List<LedgerEntry> page = after;
      Instant next = null;
      if (after.size() > limit) {
        int end = limit;
        while (end > 0 && after.get(end - 1).appliedAt().equals(after.get(limit).appliedAt())) {
          end--;
        }
        page = after.subList(0, end == 0 ? limit : end);
        next = page.get(page.size() - 1).appliedAt();
      }
      List<Map<String, Object>> items = new java.util.ArrayList<>();
      for (LedgerEntry e : page) {
        Map<String, Object> item = new java.util.LinkedHashMap<>();
        item.put("operationId", e.operationId());
        item.put("destination", e.destination());
        item.put("messageId", e.messageId());
        item.put("appliedAt", e.appliedAt().toString());
        item.put("deliveries", e.deliveries());
        item.put("appliedCount", e.appliedCount());
        items.add(item);
      }
      Map<String, Object> body = new java.util.LinkedHashMap<>();
      body.put("items", items);
      body.put("next", next == null ? null : next.toString());
      byte[] bytes = JSON.writeValueAsBytes(body);
      ex.getResponseHeaders().add("Content-Type", "application/json");
      ex.sendResponseHeaders(200, bytes.length);
      ex.getResponseBody().write(bytes);
    }
  }

  /** Microseconds, as the databases store them, so times compare equal after a round trip. */
  private static Instant now() {
    return Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MICROS);
  }

  /** The sink lost its record of applying {@code operationId} (a possibly lost effect). */
  public void forgetInLedger(String operationId) {
    if (ledger.remove(operationId) == null) {
      throw new IllegalStateException(operationId + " is not in the ledger");
    }
  }

  /** The sink applied {@code operationId} once more (its deduplication failed). */
  public void applyAgainInLedger(String operationId) {
    if (ledger.computeIfPresent(
            operationId,
            (k, e) ->
                new LedgerEntry(
                    k,
                    e.destination(),
                    e.messageId(),
                    e.appliedAt(),
                    e.deliveries() + 1,
                    e.appliedCount() + 1))
        == null) {
      throw new IllegalStateException(operationId + " is not in the ledger");
    }
  }

  /**
   * A confirmation the relay's deliveries did not cause (a ghost, or an applied-then-failed
   * request).
   */
  public void confirmInLedger(String operationId, String destination) {
    ledger.put(operationId, new LedgerEntry(operationId, destination, null, now(), 1, 1));
  }

  /** The ledger answers {@code status} (200: normally). */
  public void ledgerStatus(int status) {
    ledgerStatus = status;
  }

  public java.util.Optional<LedgerEntry> ledgerEntry(String operationId) {
    return java.util.Optional.ofNullable(ledger.get(operationId));
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
    ledger.clear();
    ledgerStatus = 200;
    defaultResponse = Response.status(200);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
