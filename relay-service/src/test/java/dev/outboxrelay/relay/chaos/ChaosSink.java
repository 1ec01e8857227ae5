package dev.outboxrelay.relay.chaos;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.outboxrelay.outbox.testing.TimeSpans;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The external system of the fault experiments: a real HTTP endpoint on loopback that applies each
 * operation (its {@code Idempotency-Key}) once, like a payment API with idempotency keys, and can
 * misbehave on cue.
 *
 * <p>Two ledgers make the verdict honest: {@linkplain #effects(String) effects} are counted per
 * business payload (the job's body), applications per idempotency key. If the relay ever sent one
 * job under two different keys, the payload would show two effects: a duplicate that the key-based
 * deduplication could not absorb. Repeats under the same key are redeliveries.
 */
public final class ChaosSink implements AutoCloseable {
  /** One delivery as received. */
  public record Delivery(
      String key, String body, int attempt, long messageId, long receivedNanos) {}

  /** What the sink does with a delivery; may block (to hold a request) or change with time. */
  @FunctionalInterface
  public interface Behaviour {
    Action decide(Delivery delivery) throws Exception;
  }

  /** The sink's answer to one delivery. */
  public sealed interface Action {
    /** Answers {@code status} after {@code delayMillis}; a 2xx applies the effect first. */
    record Respond(int status, Map<String, String> headers, long delayMillis) implements Action {}

    /**
     * Applies the effect, then closes the connection without answering (a lost acknowledgement).
     */
    record ApplyThenDrop() implements Action {}

    /** Closes the connection without applying or answering (a crash before the work). */
    record Drop() implements Action {}

    /** Answers 200 but never applies the effect: a sink that loses work it acknowledged. */
    record AcceptWithoutApplying() implements Action {}

    /**
     * Applies the effect again even when this key was applied before (a sink that ignores the
     * idempotency key), then answers 200 or, with {@code answer} false, drops the connection.
     */
    record ApplyIgnoringKey(boolean answer) implements Action {}

    static Action ok() {
      return new Respond(200, Map.of(), 0);
    }

    static Action status(int status) {
      return new Respond(status, Map.of(), 0);
    }

    static Action slowOk(long delayMillis) {
      return new Respond(200, Map.of(), delayMillis);
    }

    static Action unavailable(int retryAfterSeconds) {
      return new Respond(503, Map.of("Retry-After", Integer.toString(retryAfterSeconds)), 0);
    }
  }

  static {
    // The JDK server writes headers and body separately; without TCP_NODELAY, Nagle's algorithm
    // and the client's delayed ACK stall every response ~40ms and the sink, not the relay, sets
    // the pace. Read once, when the server classes load.
    System.setProperty("sun.net.httpserver.nodelay", "true");
  }

  private final int port;
  private final ExecutorService executor =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "chaos-sink");
            t.setDaemon(true);
            return t;
          });
  private final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
  private final Set<String> appliedKeys = new HashSet<>();
  private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();

  /** Times each operation ID was applied: what the external system would confirm. */
  private final Map<String, AtomicInteger> applications = new ConcurrentHashMap<>();

  private volatile Behaviour behaviour = d -> Action.ok();
  private HttpServer server;

  public ChaosSink() {
    server = bind(0);
    port = server.getAddress().getPort();
  }

  private HttpServer bind(int onPort) {
    try {
      HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", onPort), 128);
      s.createContext("/", this::handle);
      s.setExecutor(executor);
      s.start();
      return s;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on 127.0.0.1:" + onPort, e);
    }
  }

  public URI url(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  public void behave(Behaviour b) {
    behaviour = b;
  }

  /** Stops listening: new connections are refused, open ones are closed. */
  public synchronized void stop() {
    if (server != null) {
      server.stop(0);
      server = null;
    }
  }

  /** Listens again on the same port. */
  public synchronized void start() {
    if (server == null) {
      server = bind(port);
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex;
        InputStream in = ex.getRequestBody()) {
      String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
      String attempt = ex.getRequestHeaders().getFirst("X-Outbox-Attempt");
      String messageId = ex.getRequestHeaders().getFirst("X-Outbox-Message-Id");
      if (key == null || attempt == null || messageId == null) {
        respond(
            ex, 400, Map.of(), "missing Idempotency-Key, X-Outbox-Attempt or X-Outbox-Message-Id");
        return;
      }
      Delivery d =
          new Delivery(
              key, body, Integer.parseInt(attempt), Long.parseLong(messageId), System.nanoTime());
      deliveries.add(d);
      Action action;
      try {
        action = behaviour.decide(d);
      } catch (Exception e) {
        respond(ex, 500, Map.of(), "behaviour failed: " + e);
        return;
      }
      if (action instanceof Action.Respond r) {
        if (r.delayMillis() > 0) {
          TimeSpans.simulateWork(Duration.ofMillis(r.delayMillis())); // a slow sink on cue
        }
        if (r.status() / 100 == 2) {
          boolean first = apply(d);
          respond(ex, r.status(), r.headers(), first ? "applied" : "already applied");
        } else {
          respond(ex, r.status(), r.headers(), "refused by the chaos sink");
        }
      } else if (action instanceof Action.ApplyThenDrop) {
        apply(d);
        // Closing the exchange before any response header closes the connection.
      } else if (action instanceof Action.AcceptWithoutApplying) {
        respond(ex, 200, Map.of(), "accepted");
      } else if (action instanceof Action.ApplyIgnoringKey a) {
        applications.computeIfAbsent(d.key(), k -> new AtomicInteger()).incrementAndGet();
        effects.computeIfAbsent(d.body(), b -> new AtomicInteger()).incrementAndGet();
        if (a.answer()) {
          respond(ex, 200, Map.of(), "applied");
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void respond(HttpExchange ex, int status, Map<String, String> headers, String text)
      throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    headers.forEach((k, v) -> ex.getResponseHeaders().add(k, v));
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  /** Applies the operation once per key; returns true when this call applied it. */
  private boolean apply(Delivery d) {
    synchronized (appliedKeys) {
      if (!appliedKeys.add(d.key())) {
        return false;
      }
    }
    applications.computeIfAbsent(d.key(), k -> new AtomicInteger()).incrementAndGet();
    effects.computeIfAbsent(d.body(), b -> new AtomicInteger()).incrementAndGet();
    return true;
  }

  /** Operation ID → times applied (more than 1 only through {@link Action.ApplyIgnoringKey}). */
  public Map<String, Integer> applications() {
    Map<String, Integer> out = new java.util.TreeMap<>();
    applications.forEach((k, n) -> out.put(k, n.get()));
    return out;
  }

  /** Effects applied for one business payload (1 is right; 0 lost; more is a duplicate). */
  public int effects(String body) {
    AtomicInteger n = effects.get(body);
    return n == null ? 0 : n.get();
  }

  /** Payloads with more than one effect, and the surplus summed. */
  public int duplicateEffects() {
    return effects.values().stream().mapToInt(n -> Math.max(0, n.get() - 1)).sum();
  }

  public List<Delivery> deliveries() {
    return List.copyOf(deliveries);
  }

  /** Deliveries of keys that had been delivered before (absorbed repeats). */
  public long redeliveries() {
    return deliveries.size() - deliveries.stream().map(Delivery::key).distinct().count();
  }

  public long deliveriesOf(String key) {
    return deliveries.stream().filter(d -> d.key().equals(key)).count();
  }

  public int appliedCount() {
    synchronized (appliedKeys) {
      return appliedKeys.size();
    }
  }

  @Override
  public void close() {
    stop();
    executor.shutdownNow();
  }
}
