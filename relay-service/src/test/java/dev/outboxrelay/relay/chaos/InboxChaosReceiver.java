package dev.outboxrelay.relay.chaos;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.outboxrelay.outbox.inbox.Inbox;
import dev.outboxrelay.outbox.inbox.InboxConfig;
import dev.outboxrelay.outbox.inbox.InboxConflictException;
import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InboxHandler;
import dev.outboxrelay.outbox.inbox.InboxLedger;
import dev.outboxrelay.outbox.inbox.InboxReceipt;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import dev.outboxrelay.outbox.inbox.WebhookVerifier;
import dev.outboxrelay.outbox.inbox.messaging.CommittingInbox;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The receiver of the {@code inbox-kill} experiment ({@link InboxKillChaosIT}), run as a process of
 * its own: the JDK HTTP server, the inbox on plain JDBC ({@link CommittingInbox#jdbc}) and a
 * business table {@value #EFFECT} with one row per application (not unique, so a second application
 * of an ID shows). {@code POST /deliveries} verifies the relay's signature, receives once and
 * answers 200; with probability {@code receiver.halt-after-commit} it halts the JVM ({@link
 * Runtime#halt}) right after the commit, before answering (and always after commit number {@code
 * receiver.halt-at-commit}, when set): the relay sees a dropped connection for a delivery that was
 * applied. {@code GET /ledger} serves the inbox in the relay's {@code http-ledger} format.
 *
 * <p>System properties: {@code quarkus.http.port}, {@code receiver.jdbc.url}, {@code
 * receiver.jdbc.user}, {@code receiver.destination}, {@code receiver.hmac-secret}, {@code
 * receiver.halt-after-commit} (0..1), {@code receiver.halt-at-commit}.
 */
public final class InboxChaosReceiver {
  /** The receiver's business table. */
  public static final String EFFECT = "receiver_effect";

  /** Printed just before a halt after a commit, so the test can tell halts from its own kills. */
  public static final String HALT_LINE = "HALT after commit of ";

  private static final ObjectMapper JSON =
      new ObjectMapper()
          .findAndRegisterModules()
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);

  private final String destination;
  private final double haltAfterCommit;
  private final long haltAtCommit = Long.getLong("receiver.halt-at-commit", 0);
  private final AtomicLong commits = new AtomicLong();
  private final WebhookVerifier verifier;
  private final CommittingInbox inbox;
  private final InboxLedger ledger;

  private InboxChaosReceiver(
      PGSimpleDataSource ds, String destination, String secret, double haltAfterCommit) {
    this.destination = destination;
    this.haltAfterCommit = haltAfterCommit;
    this.verifier = WebhookVerifier.of(List.of(secret), Duration.ofMinutes(5), Clock.systemUTC());
    this.inbox = CommittingInbox.jdbc(ds, new Inbox(InboxConfig.defaults()));
    this.ledger = new InboxLedger(ds);
  }

  public static void main(String[] args) throws IOException {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setURL(System.getProperty("receiver.jdbc.url"));
    ds.setUser(System.getProperty("receiver.jdbc.user"));
    InboxChaosReceiver receiver =
        new InboxChaosReceiver(
            ds,
            System.getProperty("receiver.destination"),
            System.getProperty("receiver.hmac-secret"),
            Double.parseDouble(System.getProperty("receiver.halt-after-commit", "0")));
    HttpServer server =
        HttpServer.create(
            new InetSocketAddress("127.0.0.1", Integer.getInteger("quarkus.http.port")), 64);
    server.setExecutor(Executors.newFixedThreadPool(16));
    server.createContext("/deliveries", receiver::deliver);
    server.createContext("/ledger", receiver::ledger);
    server.createContext("/q/health", e -> answer(e, 200, Map.of("status", "UP")));
    server.start();
    System.out.println("receiver listening on " + server.getAddress());
  }

  private void deliver(HttpExchange e) throws IOException {
    byte[] body = e.getRequestBody().readAllBytes();
    if (!verifier.verify(e.getRequestHeaders().getFirst("X-Outbox-Signature"), body).valid()) {
      answer(e, 401, Map.of("detail", "bad signature"));
      return;
    }
    String messageId = e.getRequestHeaders().getFirst("X-Outbox-Message-Id");
    InboxDelivery delivery =
        new InboxDelivery(
            e.getRequestHeaders().getFirst("Idempotency-Key"),
            destination,
            body,
            messageId == null ? null : Long.valueOf(messageId));
    InboxReceipt receipt;
    try {
      receipt = inbox.receive(delivery, EFFECT_HANDLER);
    } catch (InboxConflictException c) {
      answer(e, 409, Map.of("detail", c.getMessage()));
      return;
    } catch (InvalidDeliveryException bad) {
      answer(e, 400, Map.of("detail", bad.getMessage(), "field", bad.field()));
      return;
    } catch (RuntimeException failed) {
      answer(e, 503, Map.of("detail", String.valueOf(failed.getMessage())));
      return;
    }
    if (commits.incrementAndGet() == haltAtCommit
        || haltAfterCommit > 0 && ThreadLocalRandom.current().nextDouble() < haltAfterCommit) {
      System.out.println(HALT_LINE + delivery.operationId());
      System.out.flush();
      Runtime.getRuntime().halt(137);
    }
    answer(e, 200, Map.of("operationId", receipt.operationId(), "applied", receipt.applied()));
  }

  private static final InboxHandler EFFECT_HANDLER =
      (c, d) -> {
        try (PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO " + EFFECT + " (operation_id, payload) VALUES (?, ?)")) {
          ps.setString(1, d.operationId());
          ps.setString(2, d.payloadText());
          ps.executeUpdate();
        }
        return null;
      };

  private void ledger(HttpExchange e) throws IOException {
    Map<String, String> query = new HashMap<>();
    String raw = e.getRequestURI().getRawQuery();
    for (String pair : raw == null ? new String[0] : raw.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        query.put(
            pair.substring(0, eq),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    Instant since = query.containsKey("since") ? Instant.parse(query.get("since")) : null;
    int limit = Integer.parseInt(query.getOrDefault("limit", "100"));
    answer(e, 200, ledger.page(since, limit, destination));
  }

  private static void answer(HttpExchange e, int status, Object body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    e.getResponseHeaders().set("Content-Type", "application/json");
    e.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = e.getResponseBody()) {
      out.write(bytes);
    }
  }
}
