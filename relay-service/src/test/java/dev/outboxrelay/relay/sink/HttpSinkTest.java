package dev.outboxrelay.relay.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver.Response;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The HTTP sink against a real HTTP server on loopback. */
class HttpSinkTest {
  static RecordingHttpReceiver receiver;
  HttpSink sink;

  @BeforeAll
  static void startReceiver() throws IOException {
    receiver = new RecordingHttpReceiver();
  }

  @AfterAll
  static void stopReceiver() {
    receiver.close();
  }

  @BeforeEach
  void setUp() {
    receiver.reset();
    sink = new HttpSink(receiver.url("/hook"), Duration.ofSeconds(1), Duration.ofMillis(500));
  }

  static ClaimedJob message(String operationId) {
    return new ClaimedJob(
        42,
        operationId,
        "billing",
        null,
        "{\"a\":1}",
        "application/json",
        Map.of("X-Tenant", "t1", "Host", "evil.example"),
        2,
        UUID.randomUUID(),
        Instant.now(),
        Instant.now().plusSeconds(30));
  }

  @ParameterizedTest
  @ValueSource(ints = {200, 201, 202, 204})
  void twoHundredsAreDelivered(int status) throws Exception {
    receiver.script("op-ok", Response.status(status));
    SinkResult r = sink.deliver(message("op-ok")).toCompletableFuture().join();
    assertInstanceOf(SinkResult.Delivered.class, r);
    assertTrue(r.summary().startsWith("HTTP " + status), r.summary());
  }

  @Test
  void sendsIdempotencyKeyMessageIdAttemptContentTypeAndJobHeaders() throws Exception {
    sink.deliver(message("order-7/billing")).toCompletableFuture().join();
    RecordingHttpReceiver.Request req = receiver.requests().get(0);
    assertEquals("/hook", req.path());
    assertEquals("order-7/billing", req.header("Idempotency-Key"));
    assertEquals("42", req.header("X-Outbox-Message-Id"));
    assertEquals(
        "3", req.header("X-Outbox-Attempt"), "attempts=2 before this claim: this is attempt 3");
    assertEquals("application/json", req.header("Content-Type"));
    assertEquals("t1", req.header("X-Tenant"));
    assertEquals("{\"a\":1}", req.body());
    assertTrue(req.header("Host").startsWith("127.0.0.1"), "a job header must not override Host");
  }

  @ParameterizedTest
  @ValueSource(ints = {408, 409, 425, 429, 500, 502, 503, 504})
  void transientStatusesRetry(int status) throws Exception {
    receiver.script("op-t", Response.status(status));
    SinkResult r = sink.deliver(message("op-t")).toCompletableFuture().join();
    SinkResult.RetryLater retry = assertInstanceOf(SinkResult.RetryLater.class, r);
    assertEquals("HTTP " + status, retry.errorClass());
    assertEquals(Optional.empty(), retry.retryAfter());
  }

  @ParameterizedTest
  @ValueSource(ints = {400, 401, 403, 404, 410, 422, 301, 302})
  void otherStatusesArePermanent(int status) throws Exception {
    receiver.script(
        "op-p",
        new Response(
            status,
            status / 100 == 3 ? Map.of("Location", "/x") : Map.of(),
            "{\"error\":\"nope\"}",
            0));
    SinkResult r = sink.deliver(message("op-p")).toCompletableFuture().join();
    SinkResult.PermanentFailure p = assertInstanceOf(SinkResult.PermanentFailure.class, r);
    assertEquals("HTTP " + status, p.errorClass());
    assertTrue(
        p.summary().contains("nope"), "the response body is kept for diagnosis: " + p.summary());
  }

  @Test
  void retryAfterSecondsIsHonoured() throws Exception {
    receiver.script("op-ra", new Response(503, Map.of("Retry-After", "7"), "", 0));
    SinkResult.RetryLater r =
        assertInstanceOf(
            SinkResult.RetryLater.class,
            sink.deliver(message("op-ra")).toCompletableFuture().join());
    assertEquals(Optional.of(Duration.ofSeconds(7)), r.retryAfter());
  }

  @Test
  void retryAfterHttpDateIsHonoured() {
    Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
    String date =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.parse("2026-01-01T00:02:00Z"));
    assertEquals(Optional.of(Duration.ofMinutes(2)), HttpSink.parseRetryAfter(date, clock));
    assertEquals(Optional.empty(), HttpSink.parseRetryAfter("soon", clock));
    assertEquals(Optional.of(Duration.ZERO), HttpSink.parseRetryAfter("-5", clock));
    assertEquals(
        Optional.of(HttpSink.MAX_RETRY_AFTER), HttpSink.parseRetryAfter("99999999", clock));
  }

  @Test
  void timeoutRetries() throws Exception {
    receiver.script("op-slow", Response.slow(2_000));
    SinkResult.RetryLater r =
        assertInstanceOf(
            SinkResult.RetryLater.class,
            sink.deliver(message("op-slow")).toCompletableFuture().join());
    assertEquals("Timeout", r.errorClass());
  }

  @Test
  void refusedConnectionRetries() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    HttpSink nowhere =
        new HttpSink(
            URI.create("http://127.0.0.1:" + port + "/"),
            Duration.ofMillis(500),
            Duration.ofMillis(500));
    SinkResult.RetryLater r =
        assertInstanceOf(
            SinkResult.RetryLater.class,
            nowhere.deliver(message("op-x")).toCompletableFuture().join());
    assertEquals("ConnectException", r.errorClass());
    assertEquals(
        "connection refused by 127.0.0.1:"
            + port
            + " (nothing listens there, or a firewall refuses)"
            + " for POST http://127.0.0.1:"
            + port
            + "/",
        r.error(),
        "names the cause, host and port, never 'null'");
  }

  /**
   * A listener whose accept queue is full drops the next SYN: the connection is never made, so the
   * connect timeout (here 300ms) ends the send long before the request timeout (10s), and the
   * diagnosis names connect-timeout, not the request timeout.
   */
  @Test
  void aConnectTimeoutIsToldApartFromAResponseTimeout() throws Exception {
    try (ServerSocket full = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      int port = full.getLocalPort();
      java.util.List<java.net.Socket> fillers = new java.util.ArrayList<>();
      try {
        for (int i = 0; i < 8; i++) {
          java.net.Socket f = new java.net.Socket();
          fillers.add(f);
          try {
            f.connect(new java.net.InetSocketAddress(full.getInetAddress(), port), 200);
          } catch (IOException queueFull) {
            break; // the queue is full: the sink's connect will time out the same way
          }
        }
        HttpSink sink =
            new HttpSink(
                URI.create("http://127.0.0.1:" + port + "/hook"),
                Duration.ofMillis(300),
                Duration.ofSeconds(10));
        long started = System.nanoTime();
        SinkResult.RetryLater r =
            assertInstanceOf(
                SinkResult.RetryLater.class,
                sink.deliver(message("op-ct")).toCompletableFuture().join());
        long tookMs = Duration.ofNanos(System.nanoTime() - started).toMillis();
        assertEquals("ConnectTimeout", r.errorClass(), r.error());
        assertEquals(
            "could not connect to 127.0.0.1:"
                + port
                + " within PT0.3S (connect-timeout) for POST"
                + " http://127.0.0.1:"
                + port
                + "/hook",
            r.error());
        assertTrue(
            tookMs < 5_000,
            "ended by the connect timeout, not the request timeout: " + tookMs + "ms");
      } finally {
        for (java.net.Socket f : fillers) {
          f.close();
        }
      }
    }
  }

  @Test
  void aResponseTimeoutNamesRequestTimeout() throws Exception {
    receiver.script("op-slow-2", Response.slow(2_000));
    SinkResult.RetryLater r =
        assertInstanceOf(
            SinkResult.RetryLater.class,
            sink.deliver(message("op-slow-2")).toCompletableFuture().join());
    assertEquals("Timeout", r.errorClass());
    assertEquals(
        "no response from " + receiver.url("/hook") + " within PT0.5S (request-timeout)",
        r.error());
  }

  @Test
  void anUnknownHostIsNamed() throws Exception {
    HttpSink sink =
        new HttpSink(
            URI.create("http://no-such-host.invalid/hook"),
            Duration.ofSeconds(2),
            Duration.ofSeconds(2));
    SinkResult.RetryLater r =
        assertInstanceOf(
            SinkResult.RetryLater.class,
            sink.deliver(message("op-dns")).toCompletableFuture().join());
    assertEquals("UnknownHost", r.errorClass(), r.error());
    assertEquals(
        "host 'no-such-host.invalid' could not be resolved (DNS) for POST http://no-such-host.invalid/hook",
        r.error());
  }

  @Test
  void invalidHeaderValueIsPermanent() throws Exception {
    ClaimedJob bad =
        new ClaimedJob(
            1,
            "op-h",
            "billing",
            null,
            "{}",
            "application/json",
            Map.of("X-Bad", "a\rb"),
            0,
            UUID.randomUUID(),
            Instant.now(),
            Instant.now());
    assertInstanceOf(
        SinkResult.PermanentFailure.class, sink.deliver(bad).toCompletableFuture().join());
  }

  static final String SECRET = "hook-secret-é";

  static ClaimedJob messageWithBody(
      String operationId, String payload, Map<String, String> headers) {
    return new ClaimedJob(
        43,
        operationId,
        "billing",
        null,
        payload,
        "application/json",
        headers,
        0,
        UUID.randomUUID(),
        Instant.now(),
        Instant.now().plusSeconds(30));
  }

  @Test
  void withASecretTheSignatureHeaderVerifiesOverTheBytesReceived() throws Exception {
    HttpSink signed =
        new HttpSink(
            receiver.url("/hook"),
            Duration.ofSeconds(1),
            Duration.ofSeconds(5),
            Optional.of(SECRET));
    // Non-ASCII: the signature must cover the UTF-8 bytes on the wire, not chars.
    signed
        .deliver(messageWithBody("op-sig", "{\"name\":\"Zoë ✓\"}", Map.of()))
        .toCompletableFuture()
        .join();
    RecordingHttpReceiver.Request req = receiver.requests().get(0);
    String header = req.header(WebhookSignature.HEADER);
    WebhookSignature.Verification v =
        WebhookSignature.verify(
            SECRET.getBytes(StandardCharsets.UTF_8),
            header,
            req.body().getBytes(StandardCharsets.UTF_8),
            Instant.now(),
            WebhookSignature.DEFAULT_TOLERANCE);
    assertTrue(v.valid(), header + ": " + v.detail());
    assertEquals(
        WebhookSignature.Reason.BAD_SIGNATURE,
        WebhookSignature.verify(
                "other".getBytes(StandardCharsets.UTF_8),
                header,
                req.body().getBytes(StandardCharsets.UTF_8),
                Instant.now(),
                WebhookSignature.DEFAULT_TOLERANCE)
            .reason());
  }

  @Test
  void theTimestampIsTheSinkClockAtSend() throws Exception {
    Clock fixed = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
    HttpSink signed =
        new HttpSink(
            receiver.url("/hook"),
            Duration.ofSeconds(5),
            HttpClient.newHttpClient(),
            fixed,
            Optional.of(SECRET));
    signed.deliver(messageWithBody("op-t", "{\"a\":1}", Map.of())).toCompletableFuture().join();
    assertEquals(
        WebhookSignature.sign(
            SECRET.getBytes(StandardCharsets.UTF_8),
            fixed.instant().getEpochSecond(),
            "{\"a\":1}".getBytes(StandardCharsets.UTF_8)),
        receiver.requests().get(0).header(WebhookSignature.HEADER));
  }

  @Test
  void withoutASecretThereIsNoSignatureAndAJobHeaderCannotForgeOne() throws Exception {
    sink.deliver(messageWithBody("op-nosig", "{}", Map.of("X-Outbox-Signature", "t=1,v1=forged")))
        .toCompletableFuture()
        .join();
    assertNull(receiver.requests().get(0).header(WebhookSignature.HEADER));
    assertTrue(!sink.signs());
  }

  @Test
  void aJobHeaderCannotReplaceTheRealSignature() throws Exception {
    HttpSink signed =
        new HttpSink(
            receiver.url("/hook"),
            Duration.ofSeconds(1),
            Duration.ofSeconds(5),
            Optional.of(SECRET));
    signed
        .deliver(messageWithBody("op-forge", "{}", Map.of("x-outbox-signature", "t=1,v1=forged")))
        .toCompletableFuture()
        .join();
    RecordingHttpReceiver.Request req = receiver.requests().get(0);
    assertEquals(
        1,
        req.headers().entrySet().stream()
            .filter(e -> e.getKey().equalsIgnoreCase(WebhookSignature.HEADER))
            .mapToInt(e -> e.getValue().size())
            .sum());
    assertTrue(!req.header(WebhookSignature.HEADER).contains("forged"));
  }

  @Test
  void aBlankSecretIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new HttpSink(
                    receiver.url("/hook"),
                    Duration.ofSeconds(1),
                    Duration.ofSeconds(1),
                    Optional.of("  ")));
    assertTrue(e.getMessage().contains("blank"), e.getMessage());
  }

  /**
   * What enqueue accepts (printable ASCII operation IDs and content types; header values of
   * printable ASCII and tab) reaches the receiver byte-for-byte: a raw socket reads the request as
   * sent, before any HTTP parser could normalise it.
   */
  @org.junit.jupiter.api.Nested
  class WireBytes {
    /** Every printable ASCII character, a space inside but at neither end. */
    static final String EVERY_PRINTABLE;

    static {
      StringBuilder b = new StringBuilder("!");
      for (char ch = 0x20; ch <= 0x7e; ch++) {
        b.append(ch);
      }
      EVERY_PRINTABLE = b.append('~').toString();
    }

    @Test
    void theOperationIdHeaderValuesAndContentTypeArriveByteForByte() throws Exception {
      Map<String, String> headers = new java.util.LinkedHashMap<>();
      headers.put("X-All", EVERY_PRINTABLE);
      headers.put("X-Tab", "a\tb\t c");
      headers.put("X-Empty", "");
      headers.put("X-Quote", "\"q\" \\ %C3%A4");
      String contentType = "text/plain; charset=\"utf-8\"; x=~!#";
      ClaimedJob m =
          new ClaimedJob(
              44,
              EVERY_PRINTABLE,
              "billing",
              null,
              "Zo\u00eb \u2713 \uD83D\uDE00",
              contentType,
              headers,
              0,
              UUID.randomUUID(),
              Instant.now(),
              Instant.now().plusSeconds(30));

      RawRequest raw =
          RawRequest.receive(
              receiverUrl ->
                  new HttpSink(receiverUrl, Duration.ofSeconds(2), Duration.ofSeconds(5))
                      .deliver(m)
                      .toCompletableFuture()
                      .join());

      assertInstanceOf(SinkResult.Delivered.class, raw.result(), raw.head());
      assertEquals(EVERY_PRINTABLE, raw.headerLine("Idempotency-Key"), raw.head());
      assertEquals(EVERY_PRINTABLE, raw.headerLine("X-All"));
      assertEquals("a\tb\t c", raw.headerLine("X-Tab"));
      assertEquals("", raw.headerLine("X-Empty"));
      assertEquals("\"q\" \\ %C3%A4", raw.headerLine("X-Quote"));
      assertEquals(contentType, raw.headerLine("Content-Type"));
      assertEquals(
          "Zo\u00eb \u2713 \uD83D\uDE00",
          new String(raw.body(), StandardCharsets.UTF_8),
          "the body is UTF-8, any character");
    }

    @Test
    void distinctOperationIdsArriveAsDistinctKeys() throws Exception {
      // "a?b" is what a lone surrogate or a Latin-1 letter used to become on the wire.
      List<String> ids = List.of("a?b", "a b", "A?b", "a?b ~", "order-1", "Order-1");
      List<String> received = new java.util.ArrayList<>();
      for (String id : ids) {
        RawRequest raw =
            RawRequest.receive(
                url ->
                    new HttpSink(url, Duration.ofSeconds(2), Duration.ofSeconds(5))
                        .deliver(message(id))
                        .toCompletableFuture()
                        .join());
        received.add(raw.headerLine("Idempotency-Key"));
      }
      assertEquals(ids, received);
      assertEquals(ids.size(), new java.util.HashSet<>(received).size());
    }
  }

  /**
   * A row written without the library (plain SQL) may hold what enqueue refuses: the sink refuses
   * it too, permanently, instead of letting the client write {@code latin1-?} for two IDs.
   */
  @org.junit.jupiter.api.Nested
  class RowsEnqueueWouldRefuse {
    @ParameterizedTest
    @ValueSource(
        strings = {
          "latin1-\u00e4",
          "latin1-\u00f6",
          "bestellung-\u00e4-\uD83D\uDE00",
          "a\u2028b",
          "a\uD800b"
        })
    void anIdAHeaderCannotCarryIsAPermanentInvalidRequestAndNothingIsSent(String id)
        throws Exception {
      SinkResult.PermanentFailure p =
          assertInstanceOf(
              SinkResult.PermanentFailure.class,
              sink.deliver(message(id)).toCompletableFuture().join());
      assertEquals("InvalidRequest", p.errorClass());
      assertTrue(p.error().startsWith("operation ID has U+"), p.error());
      assertEquals(List.of(), receiver.requests());
    }

    @Test
    void aLatin1HeaderValueOrContentTypeIsAPermanentInvalidRequest() throws Exception {
      SinkResult.PermanentFailure header =
          assertInstanceOf(
              SinkResult.PermanentFailure.class,
              sink.deliver(messageWithBody("op-h1", "{}", Map.of("X-Name", "Zo\u00eb")))
                  .toCompletableFuture()
                  .join());
      assertEquals(
          "header X-Name has U+00EB at position 3, which an HTTP field value cannot carry byte-for-byte"
              + " (printable ASCII and tab only)",
          header.error());
      ClaimedJob type =
          new ClaimedJob(
              45,
              "op-h2",
              "billing",
              null,
              "x",
              "text/plain; x=\u00e4",
              Map.of(),
              0,
              UUID.randomUUID(),
              Instant.now(),
              Instant.now().plusSeconds(30));
      assertTrue(
          assertInstanceOf(
                  SinkResult.PermanentFailure.class,
                  sink.deliver(type).toCompletableFuture().join())
              .error()
              .startsWith("content type has U+00E4 at position 15"));
      assertEquals(List.of(), receiver.requests());
    }
  }

  /**
   * One request read off a plain socket: its head (ISO-8859-1, one char per byte) and body bytes.
   */
  record RawRequest(String head, byte[] body, SinkResult result) {
    interface Send {
      SinkResult send(URI url) throws Exception;
    }

    /** Listens on loopback, runs {@code send} against it, answers 200 and returns what arrived. */
    static RawRequest receive(Send send) throws Exception {
      try (ServerSocket server =
          new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        java.util.concurrent.CompletableFuture<RawRequest> read =
            java.util.concurrent.CompletableFuture.supplyAsync(
                () -> {
                  try (java.net.Socket s = server.accept()) {
                    java.io.InputStream in = s.getInputStream();
                    java.io.ByteArrayOutputStream head = new java.io.ByteArrayOutputStream();
                    while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                      int b = in.read();
                      if (b < 0) {
                        throw new IOException("connection closed inside the request head: " + head);
                      }
                      head.write(b);
                    }
                    String text = head.toString(StandardCharsets.ISO_8859_1);
                    int length = Integer.parseInt(headerLine(text, "Content-Length"));
                    byte[] body = in.readNBytes(length);
                    s.getOutputStream()
                        .write(
                            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                    return new RawRequest(text, body, null);
                  } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                  }
                });
        SinkResult result =
            send.send(URI.create("http://127.0.0.1:" + server.getLocalPort() + "/hook"));
        RawRequest r = read.get(10, java.util.concurrent.TimeUnit.SECONDS);
        return new RawRequest(r.head(), r.body(), result);
      }
    }

    /**
     * The value of the one header line named {@code name} (any case), exactly as its bytes arrived.
     */
    String headerLine(String name) {
      return headerLine(head, name);
    }

    static String headerLine(String head, String name) {
      List<String> values =
          java.util.Arrays.stream(head.split("\r\n"))
              .filter(l -> l.regionMatches(true, 0, name + ":", 0, name.length() + 1))
              .map(l -> l.substring(name.length() + 1))
              .toList();
      assertEquals(1, values.size(), name + " once in:\n" + head);
      String v = values.get(0);
      // The client writes "Name: value"; one separating space is syntax, the rest is the value.
      return v.startsWith(" ") ? v.substring(1) : v;
    }
  }
}
