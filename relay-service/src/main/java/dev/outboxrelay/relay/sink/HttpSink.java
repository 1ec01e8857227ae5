package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * POSTs the payload to a URL. Status mapping: 2xx delivered; 408, 409, 425, 429 and 5xx retry
 * (honouring {@code Retry-After}, seconds or HTTP date); any other status permanent. Refused
 * connections, resets and timeouts retry.
 *
 * <p>Each destination has its own client, and the client its own single thread for the work the JDK
 * client hands off its selector thread (parsing answers, completing their stages): the client's
 * default, a cached pool, handed every answer to another thread and cost about twice the CPU per
 * request on loopback (docs/performance.md, "Where drain-http and drain-kafka lose their time").
 * The work per answer is short and never blocks, so one thread serves many connections.
 *
 * <p>Whatever its own executor, the JDK client completes the stage {@code sendAsync} returns on
 * {@code CompletableFuture}'s default executor, which with a common pool of parallelism 1 (a JVM
 * that sees 1 or 2 CPUs) starts a new thread for every answer: about three times the relay's CPU
 * per HTTP send on 2 cores. The relay image and the project's launchers set {@value
 * #COMMON_POOL_FLAG}; a relay started without it logs a warning once (docs/deployment.md, "JVM
 * options").
 *
 * <p>With a secret, every request carries {@value WebhookSignature#HEADER} over the exact body
 * bytes sent, timestamped at send (a retry is signed afresh). The secret is held only here and is
 * never logged or put into a result.
 */
public final class HttpSink implements MessageSink {
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  public static final String MESSAGE_ID = "X-Outbox-Message-Id";
  public static final String ATTEMPT = "X-Outbox-Attempt";

  /** Headers java.net.http refuses to set, or that we set ourselves. */
  private static final Set<String> RESERVED =
      Set.of(
          "connection",
          "content-length",
          "expect",
          "host",
          "upgrade",
          "content-type",
          IDEMPOTENCY_KEY.toLowerCase(Locale.ROOT),
          MESSAGE_ID.toLowerCase(Locale.ROOT),
          ATTEMPT.toLowerCase(Locale.ROOT),
          WebhookSignature.HEADER.toLowerCase(Locale.ROOT));

  private static final Set<Integer> RETRYABLE_4XX = Set.of(408, 409, 425, 429);
  private static final int SUMMARY_BODY_CHARS = 200;

  /** A Retry-After beyond this is treated as this: a typo must not park a job for a year. */
  static final Duration MAX_RETRY_AFTER = Duration.ofHours(24);

  /** The JVM option that keeps the JDK client from starting a thread per answer (class Javadoc). */
  public static final String COMMON_POOL_FLAG =
      "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2";

  private static final Logger LOG = Logger.getLogger(HttpSink.class);
  private static final AtomicBoolean SERIAL_POOL_WARNED = new AtomicBoolean();

  private final URI url;
  private final Duration requestTimeout;
  private final HttpClient client;
  private final Clock clock;

  /** HMAC key; null when requests go unsigned. */
  private final byte[] hmacSecret;

  public HttpSink(URI url, Duration connectTimeout, Duration requestTimeout) {
    this(url, connectTimeout, requestTimeout, Optional.empty());
  }

  /**
   * @param hmacSecret when present, sign every request with it (UTF-8 bytes of the string)
   * @throws IllegalArgumentException when the secret is present but blank
   */
  public HttpSink(
      URI url, Duration connectTimeout, Duration requestTimeout, Optional<String> hmacSecret) {
    this(
        url,
        requestTimeout,
        HttpClient.newBuilder()
            .connectTimeout(connectTimeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .executor(SendThread.named("outbox-http-" + url.getHost() + ":" + port(url)))
            .build(),
        Clock.systemUTC(),
        hmacSecret);
    warnIfAnswersStartThreads();
  }

  /** Logs once per JVM when every HTTP answer would start a thread of its own (class Javadoc). */
  private static void warnIfAnswersStartThreads() {
    int parallelism = ForkJoinPool.getCommonPoolParallelism();
    if (parallelism < 2 && SERIAL_POOL_WARNED.compareAndSet(false, true)) {
      LOG.warnf(
          "The JVM's common pool has parallelism %d, so the JDK HTTP client starts a thread for "
              + "every answer (about three times the CPU per send on 2 CPUs). Start the relay with %s, as "
              + "its image does (docs/deployment.md, \"JVM options\").",
          parallelism, COMMON_POOL_FLAG);
    }
  }

  HttpSink(
      URI url,
      Duration requestTimeout,
      HttpClient client,
      Clock clock,
      Optional<String> hmacSecret) {
    this.url = url;
    this.requestTimeout = requestTimeout;
    this.client = client;
    this.clock = clock;
    if (hmacSecret.isPresent() && hmacSecret.get().isBlank()) {
      throw new IllegalArgumentException("the HMAC secret must not be blank");
    }
    this.hmacSecret = hmacSecret.map(s -> s.getBytes(StandardCharsets.UTF_8)).orElse(null);
  }

  /** Whether requests carry {@value WebhookSignature#HEADER}. */
  public boolean signs() {
    return hmacSecret != null;
  }

  public URI url() {
    return url;
  }

  /**
   * Sends with the client's {@code sendAsync}: no thread waits for the answer, and the client keeps
   * its connections alive between requests (one per request in flight, reused).
   */
  @Override
  public CompletionStage<SinkResult> deliver(ClaimedJob m) {
    HttpRequest request;
    try {
      request = request(m);
    } catch (IllegalArgumentException e) {
      return MessageSink.answered(
          new SinkResult.PermanentFailure("InvalidRequest", e.getMessage(), null));
    }
    return client
        .sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8))
        .handle((response, error) -> error == null ? classify(response) : failed(unwrapped(error)));
  }

  /**
   * The exception the send failed with, without the stage's {@code CompletionException} wrapper.
   */
  private static Throwable unwrapped(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  /** As {@link #failed(IOException)}; any other exception is a retry with its message. */
  SinkResult.RetryLater failed(Throwable e) {
    if (e instanceof IOException io) {
      return failed(io);
    }
    return new SinkResult.RetryLater(
        Optional.empty(),
        e.getClass().getSimpleName(),
        "POST " + url + " failed: " + message(e),
        null);
  }

  /**
   * A send that got no HTTP answer, as a retry whose error class and message say which setting or
   * what to look at: a connect timeout ({@code connect-timeout}) apart from a response timeout
   * ({@code request-timeout}), a refused connection naming host and port, an unknown host; else the
   * exception's own message, or its cause's when it has none (the JDK client throws a {@code
   * ConnectException} without message).
   */
  SinkResult.RetryLater failed(IOException e) {
    String hostPort = url.getHost() + ":" + port(url);
    String errorClass;
    String error;
    if (e instanceof HttpConnectTimeoutException) {
      errorClass = "ConnectTimeout";
      error =
          "could not connect to "
              + hostPort
              + " within "
              + client.connectTimeout().map(Duration::toString).orElse("the connect timeout")
              + " (connect-timeout) for POST "
              + url;
    } else if (e instanceof HttpTimeoutException) {
      errorClass = "Timeout";
      error = "no response from " + url + " within " + requestTimeout + " (request-timeout)";
    } else if (causedBy(e, ConnectException.class)
        && !causedBy(e, UnresolvedAddressException.class)) {
      errorClass = "ConnectException";
      String why = message(e);
      error =
          why.toLowerCase(Locale.ROOT).contains("refused") || why.endsWith("(no message)")
              ? "connection refused by "
                  + hostPort
                  + " (nothing listens there, or a firewall refuses) for POST "
                  + url
              : "could not connect to " + hostPort + " for POST " + url + ": " + why;
    } else if (causedBy(e, UnresolvedAddressException.class)
        || causedBy(e, UnknownHostException.class)) {
      errorClass = "UnknownHost";
      error = "host '" + url.getHost() + "' could not be resolved (DNS) for POST " + url;
    } else {
      errorClass = e.getClass().getSimpleName();
      error = "POST " + url + " failed: " + message(e);
    }
    return new SinkResult.RetryLater(Optional.empty(), errorClass, error, null);
  }

  private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  /** The first message along the cause chain, with the class that carries it; never "null". */
  private static String message(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t.getMessage() != null && !t.getMessage().isBlank()) {
        return t == e ? t.getMessage() : t.getClass().getSimpleName() + ": " + t.getMessage();
      }
    }
    return e.getClass().getSimpleName() + " (no message)";
  }

  private static int port(URI url) {
    return url.getPort() != -1
        ? url.getPort()
        : "https".equalsIgnoreCase(url.getScheme()) ? 443 : 80;
  }

  private HttpRequest request(ClaimedJob m) {
    requireFieldValue("operation ID", m.operationId());
    requireFieldValue("content type", m.contentType());
    // The signature covers these exact bytes: sign and send the same array.
    byte[] body = m.payload().getBytes(StandardCharsets.UTF_8);
    HttpRequest.Builder b =
        HttpRequest.newBuilder(url)
            .timeout(requestTimeout)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    for (Map.Entry<String, String> h : m.headers().entrySet()) {
      if (!RESERVED.contains(h.getKey().toLowerCase(Locale.ROOT))) {
        requireFieldValue("header " + h.getKey(), h.getValue());
        b.header(h.getKey(), h.getValue());
      }
    }
    b.header("Content-Type", m.contentType())
        .header(IDEMPOTENCY_KEY, m.operationId())
        .header(MESSAGE_ID, Long.toString(m.id()))
        .header(ATTEMPT, Integer.toString(m.attemptNo()));
    if (hmacSecret != null) {
      b.header(
          WebhookSignature.HEADER,
          WebhookSignature.sign(hmacSecret, clock.instant().getEpochSecond(), body));
    }
    return b.build();
  }

  /**
   * Refuses what the client would not write byte-for-byte (it writes U+0080 to U+00FF as {@code ?},
   * so two IDs could reach the receiver as one key). Enqueue already refuses such values; this
   * catches rows written another way (plain SQL), as a permanent {@code InvalidRequest}.
   */
  private static void requireFieldValue(String what, String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if ((c < 0x20 && c != '\t') || c > 0x7E) {
        throw new IllegalArgumentException(
            what
                + " has U+"
                + String.format(Locale.ROOT, "%04X", (int) c)
                + " at position "
                + (value.codePointCount(0, i) + 1)
                + ", which an HTTP field value cannot carry"
                + " byte-for-byte (printable ASCII and tab only)");
      }
    }
  }

  SinkResult classify(HttpResponse<String> response) {
    int status = response.statusCode();
    String summary = summary(response);
    if (status >= 200 && status < 300) {
      return new SinkResult.Delivered(summary);
    }
    if (status >= 500 || RETRYABLE_4XX.contains(status)) {
      return new SinkResult.RetryLater(
          retryAfter(response), "HTTP " + status, "POST " + url + " answered " + status, summary);
    }
    String why = status >= 300 && status < 400 ? " (redirects are not followed; fix the URL)" : "";
    return new SinkResult.PermanentFailure(
        "HTTP " + status, "POST " + url + " answered " + status + why, summary);
  }

  private Optional<Duration> retryAfter(HttpResponse<?> response) {
    return response.headers().firstValue("Retry-After").flatMap(v -> parseRetryAfter(v, clock));
  }

  /**
   * Parses delta-seconds or an HTTP date; empty when unparseable. Capped at {@link
   * #MAX_RETRY_AFTER}.
   */
  static Optional<Duration> parseRetryAfter(String value, Clock clock) {
    String v = value.trim();
    Duration d;
    try {
      d = Duration.ofSeconds(Long.parseLong(v));
    } catch (NumberFormatException notSeconds) {
      try {
        ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
        d = Duration.between(clock.instant(), at.toInstant());
      } catch (DateTimeParseException notDate) {
        return Optional.empty();
      }
    }
    if (d.isNegative()) {
      d = Duration.ZERO;
    }
    return Optional.of(d.compareTo(MAX_RETRY_AFTER) > 0 ? MAX_RETRY_AFTER : d);
  }

  private static String summary(HttpResponse<String> response) {
    String body = response.body() == null ? "" : response.body().strip();
    if (body.length() > SUMMARY_BODY_CHARS) {
      body = body.substring(0, SUMMARY_BODY_CHARS) + "…";
    }
    return "HTTP " + response.statusCode() + (body.isEmpty() ? "" : ": " + body);
  }
}
