package dev.outboxrelay.relay.bench;

import dev.outboxrelay.relay.sink.HttpSink;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The receiver of {@code drain-http}: a Vert.x HTTP server (one event-loop thread, {@value
 * #EVENT_LOOP_THREAD} in thread names) on a free loopback port, in the bench's JVM. It reads each
 * request's body and answers 200 with no body at once, keeping the connection open (HTTP/1.1
 * keep-alive). Counts requests per {@link HttpSink#MESSAGE_ID} and the client connections opened.
 *
 * <p>Not the JDK's {@code com.sun.net.httpserver}: that server (a dispatcher thread handing every
 * request to a pool of handler threads) cost about 110 to 135 µs of CPU per request on the bench's
 * 2 cores, on the same cores as the relay it measured; an event loop costs a fraction of that, so
 * the line measures the relay's HTTP sink rather than the receiver (docs/performance.md).
 */
final class LoopbackReceiver implements AutoCloseable {
  /** The prefix of the receiver's thread names, so its CPU can be told from the relay's. */
  static final String EVENT_LOOP_THREAD = "vert.x-eventloop";

  private final Vertx vertx;
  private final HttpServer server;
  private final Map<String, AtomicLong> requestsById = new ConcurrentHashMap<>();
  private final AtomicLong connections = new AtomicLong();
  private final AtomicLong requests = new AtomicLong();

  LoopbackReceiver() throws Exception {
    vertx =
        Vertx.vertx(
            new VertxOptions()
                .setEventLoopPoolSize(1)
                .setWorkerPoolSize(1)
                .setInternalBlockingPoolSize(1));
    server =
        vertx
            .createHttpServer(
                new HttpServerOptions().setHost("127.0.0.1").setPort(0).setAcceptBacklog(1024))
            .connectionHandler(c -> connections.incrementAndGet())
            .requestHandler(
                request ->
                    request
                        .body()
                        .onComplete(
                            body -> {
                              String id = request.getHeader(HttpSink.MESSAGE_ID);
                              requests.incrementAndGet();
                              requestsById
                                  .computeIfAbsent(String.valueOf(id), k -> new AtomicLong())
                                  .incrementAndGet();
                              request.response().setStatusCode(body.succeeded() ? 200 : 400).end();
                            }));
    server.listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.actualPort() + "/bench");
  }

  long requests() {
    return requests.get();
  }

  int distinctMessages() {
    return requestsById.size();
  }

  /** Client connections opened to the receiver. */
  long connections() {
    return connections.get();
  }

  @Override
  public void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
