package dev.outboxrelay.relay.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.outboxrelay.relay.sink.HttpSink;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The receiver of {@code drain-http}: the JDK's HTTP server on a free loopback port, in the bench's
 * JVM, with a pool of {@code threads} handlers. It reads each request's body and answers 200 with
 * no body at once, keeping the connection open (HTTP/1.1 keep-alive). Counts requests per {@link
 * HttpSink#MESSAGE_ID} and the distinct client connections they came on.
 */
final class LoopbackReceiver implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService handlers;
  private final Map<String, AtomicLong> requestsById = new ConcurrentHashMap<>();
  private final Set<String> connections = ConcurrentHashMap.newKeySet();
  private final AtomicLong requests = new AtomicLong();

  LoopbackReceiver(int threads) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    handlers = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "bench-http-receiver");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(handlers);
    server.createContext("/", this::handle);
    server.start();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange; InputStream body = exchange.getRequestBody()) {
      body.transferTo(java.io.OutputStream.nullOutputStream());
      String id = exchange.getRequestHeaders().getFirst(HttpSink.MESSAGE_ID);
      requests.incrementAndGet();
      connections.add(String.valueOf(exchange.getRemoteAddress()));
      requestsById.computeIfAbsent(String.valueOf(id), k -> new AtomicLong()).incrementAndGet();
      exchange.sendResponseHeaders(200, -1);
    }
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/bench");
  }

  long requests() {
    return requests.get();
  }

  int distinctMessages() {
    return requestsById.size();
  }

  /** Client connections (remote address and port) that carried at least one request. */
  int connections() {
    return connections.size();
  }

  @Override
  public void close() {
    server.stop(0);
    handlers.shutdownNow();
  }
}
