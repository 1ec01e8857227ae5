package dev.outboxrelay.relay.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Debian's Chromium ({@code /usr/bin/chromium}, installed by {@code .ci/run}) run headless as its
 * own process and driven over the Chrome DevTools Protocol with the JDK's WebSocket client: open
 * a page, evaluate JavaScript in it (read the DOM, change a filter), take a screenshot. Flags as
 * this machine requires: no sandbox (root), no background networking (the closed network
 * refuses it), a fresh profile per run.
 */
public final class HeadlessChromium implements AutoCloseable {
  public static final Path BINARY = Path.of("/usr/bin/chromium");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final Path profile;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

  private HeadlessChromium(Process process, Path profile, WebSocket socket) {
    this.process = process;
    this.profile = profile;
    this.socket = socket;
  }

  /** Starts Chromium with one blank page and connects to that page's DevTools endpoint. */
  public static HeadlessChromium start(int width, int height) throws Exception {
    if (!Files.isExecutable(BINARY)) {
      throw new IllegalStateException(BINARY + " is missing: install Debian's chromium (.ci/run does)");
    }
    Path profile = Files.createTempDirectory("chromium-profile");
    Process p = new ProcessBuilder(BINARY.toString(), "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-dev-shm-usage", "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0", "--window-size=" + width + "," + height, "--hide-scrollbars",
        "--user-data-dir=" + profile, "about:blank").redirectErrorStream(true).start();
    String browserWs = null;
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    StringBuilder seen = new StringBuilder();
    while (browserWs == null && System.nanoTime() < deadline) {
      String line = out.readLine();
      if (line == null) {
        break;
      }
      seen.append(line).append('\n');
      if (line.startsWith("DevTools listening on ")) {
        browserWs = line.substring("DevTools listening on ".length()).trim();
      }
    }
    if (browserWs == null) {
      p.destroyForcibly();
      throw new IllegalStateException("chromium did not open DevTools: " + seen);
    }
    Thread drain = new Thread(() -> out.lines().forEach(l -> { }), "chromium-output");
    drain.setDaemon(true);
    drain.start();
    URI browser = URI.create(browserWs);
    HttpClient http = HttpClient.newHttpClient();
    String list = http.send(HttpRequest.newBuilder(URI.create("http://" + browser.getAuthority() + "/json/list"))
        .build(), HttpResponse.BodyHandlers.ofString()).body();
    String pageWs = null;
    for (JsonNode target : JSON.readTree(list)) {
      if ("page".equals(target.path("type").asText())) {
        pageWs = target.path("webSocketDebuggerUrl").asText();
        break;
      }
    }
    if (pageWs == null) {
      p.destroyForcibly();
      throw new IllegalStateException("chromium has no page target: " + list);
    }
    HeadlessChromium[] self = new HeadlessChromium[1];
    WebSocket ws = http.newWebSocketBuilder().buildAsync(URI.create(pageWs), new WebSocket.Listener() {
      private final StringBuilder buffer = new StringBuilder();

      @Override
      public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
        buffer.append(data);
        if (last) {
          String message = buffer.toString();
          buffer.setLength(0);
          self[0].onMessage(message);
        }
        webSocket.request(1);
        return null;
      }
    }).get(30, TimeUnit.SECONDS);
    self[0] = new HeadlessChromium(p, profile, ws);
    self[0].call("Page.enable", JSON.createObjectNode());
    self[0].call("Runtime.enable", JSON.createObjectNode());
    return self[0];
  }

  private void onMessage(String message) {
    try {
      JsonNode node = JSON.readTree(message);
      if (node.has("id")) {
        CompletableFuture<JsonNode> f = pending.remove(node.get("id").asInt());
        if (f != null) {
          f.complete(node);
        }
      }
    } catch (IOException e) {
      // A malformed event cannot answer a pending call; ignore it.
    }
  }

  /** One DevTools command; fails with the protocol's error message. */
  public JsonNode call(String method, ObjectNode params) throws Exception {
    int id = ids.incrementAndGet();
    CompletableFuture<JsonNode> answer = new CompletableFuture<>();
    pending.put(id, answer);
    ObjectNode request = JSON.createObjectNode().put("id", id).put("method", method);
    request.set("params", params);
    socket.sendText(JSON.writeValueAsString(request), true).get(10, TimeUnit.SECONDS);
    JsonNode reply = answer.get(30, TimeUnit.SECONDS);
    if (reply.has("error")) {
      throw new IllegalStateException(method + " failed: " + reply.get("error"));
    }
    return reply.path("result");
  }

  public void navigate(String url) throws Exception {
    call("Page.navigate", JSON.createObjectNode().put("url", url));
  }

  /** Evaluates an expression in the page (promises awaited) and returns its JSON value. */
  public JsonNode evaluate(String expression) throws Exception {
    JsonNode result = call("Runtime.evaluate", JSON.createObjectNode().put("expression", expression)
        .put("returnByValue", true).put("awaitPromise", true));
    if (result.has("exceptionDetails")) {
      throw new IllegalStateException("script failed: " + result.get("exceptionDetails"));
    }
    return result.path("result").path("value");
  }

  /** Waits until the expression is true in the page. */
  public void await(String what, String expression, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    BooleanSupplier done = () -> {
      try {
        return evaluate(expression).asBoolean(false);
      } catch (Exception e) {
        return false; // the page is still loading
      }
    };
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("page never showed " + what + " within " + timeout + "; DOM: "
            + evaluate("document.documentElement.outerHTML").asText());
      }
      Thread.sleep(100);
    }
  }

  public void screenshot(Path png) throws Exception {
    JsonNode shot = call("Page.captureScreenshot", JSON.createObjectNode().put("format", "png")
        .put("captureBeyondViewport", true));
    Files.createDirectories(png.toAbsolutePath().getParent());
    Files.write(png, Base64.getDecoder().decode(shot.path("data").asText()));
  }

  @Override
  public void close() throws Exception {
    try {
      socket.abort();
    } finally {
      process.destroy();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
      try (var files = Files.walk(profile)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }
}
