package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.relay.testing.Conditions;
import dev.outboxrelay.relay.testing.PrivateRabbitMq;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The RabbitMQ sink against real brokers. On the shared RabbitMQ (127.0.0.1:5672) every test uses
 * an exchange and queue of its own and touches only its relay's connection: messages are
 * persistent, carry the operation ID as AMQP message-id, the relay headers and the job's own, and a
 * job is {@code S} only after the publisher confirm of a message some queue took; an unroutable
 * message, a missing exchange and a channel the broker closed are retries with the broker's reason
 * (never a confirm timeout), after which confirms work again without restarting the relay. A node
 * of the test's own ({@link PrivateRabbitMq}) is stopped and started for the broker restart.
 */
class RabbitMqSinkIT {
  static final String SHARED_HOST = "127.0.0.1";
  static final int SHARED_PORT = 5672;

  @Test
  void jobsBecomeConfirmedPersistentMessagesAndUnroutableOnesAreNeverSent() throws Exception {
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String exchange = "outbox-it-" + suffix;
    String queue = "outbox-it-" + suffix;
    String routingKey = "it.emails." + suffix;
    String nowhere = "it.nobody." + suffix;
    ConnectionFactory factory = factory(SHARED_PORT);
    try (ChaosExperiment x = ChaosExperiment.start("rabbitmq-sink")) {
      declareQueue(factory, exchange, queue, routingKey);
      Map<String, String> config = relayConfig(SHARED_PORT, exchange);
      config.put("outbox.destinations.emails.type", "rabbitmq");
      config.put("outbox.destinations.emails.routing-key", routingKey);
      config.put("outbox.destinations.lost.type", "rabbitmq");
      config.put("outbox.destinations.lost.routing-key", nowhere);
      config.put("outbox.relay.max-attempts", "3");
      ServiceProcess relay = x.startRelay(config);
      Outbox outbox = new Outbox(OutboxConfig.builder().destinations("emails", "lost").build());
      List<String> ops = new ArrayList<>();
      try (java.sql.Connection c = x.dataSource().getConnection()) {
        c.setAutoCommit(false);
        for (int i = 0; i < 100; i++) {
          String op = "rabbit-" + suffix + "-" + i;
          ops.add(op);
          OutboxMessage.Builder b =
              OutboxMessage.builder()
                  .operationId(op)
                  .destination("emails")
                  .payload("{\"n\":" + i + "}")
                  .header("X-Trace", "t-" + i);
          if (i % 2 == 0) {
            b.orderingKey("customer-" + (i % 10));
          }
          outbox.enqueue(c, b.build());
        }
        for (int i = 0; i < 5; i++) {
          outbox.enqueue(
              c,
              OutboxMessage.builder()
                  .operationId("lost-" + suffix + "-" + i)
                  .destination("lost")
                  .payload("{}")
                  .build());
        }
        c.commit();
      }
      x.awaitCondition(
          "100 jobs confirmed, 5 unroutable ones dead",
          Duration.ofSeconds(90),
          () ->
              x.count("destination = 'emails' AND state = 'S'") == 100
                  && x.count("destination = 'lost' AND state = 'D'") == 5);

      List<GetResponse> messages = drain(factory, queue, 100);
      Map<String, List<GetResponse>> byOp = byMessageId(messages);
      assertEquals(new TreeSet<>(ops), new TreeSet<>(byOp.keySet()), "one message per job");
      for (int i = 0; i < 100; i++) {
        String op = "rabbit-" + suffix + "-" + i;
        assertEquals(1, byOp.get(op).size(), op + " published once in a healthy run");
        GetResponse r = byOp.get(op).get(0);
        AMQP.BasicProperties p = r.getProps();
        assertEquals("{\"n\":" + i + "}", new String(r.getBody(), StandardCharsets.UTF_8));
        assertEquals(2, p.getDeliveryMode(), "persistent");
        assertEquals("application/json", p.getContentType());
        assertEquals(op, header(r, "operation-id"));
        assertEquals("t-" + i, header(r, "X-Trace"));
        assertEquals("1", header(r, "outbox-attempt"));
        assertTrue(Long.parseLong(header(r, "outbox-message-id")) > 0);
        assertEquals(routingKey, r.getEnvelope().getRoutingKey());
      }
      assertInIdOrderPerKey(messages);

      // Unroutable: retried, then dead with the exchange and routing key named; never S.
      String unroutable = "unroutable: exchange " + exchange + ", routing key " + nowhere;
      for (String lastError :
          x.rows("SELECT last_error FROM outbox_message WHERE destination = 'lost'")) {
        assertTrue(
            lastError.contains("gave up after 3 attempts (max 3): " + unroutable), lastError);
      }
      assertEquals(
          15,
          x.attempts("error_class = 'RabbitMqUnroutable'"),
          "3 attempts of 5 jobs, each returned");
      assertEquals(15.0, relay.metric("outbox_rabbitmq_unroutable_total", "destination=\"lost\""));
      HttpResponse<String> ready = relay.get("/q/health/ready");
      assertEquals(503, ready.statusCode(), ready.body());
      assertTrue(
          ready.body().contains("destination.lost") && ready.body().contains(unroutable),
          ready.body());
      assertEquals(0.0, relay.metric("outbox_destination_up", "destination=\"lost\""));
      assertEquals(1.0, relay.metric("outbox_destination_up", "destination=\"emails\""));

      // The exchange deleted while the relay runs: it declares it again on its next channel, but
      // without the binding nothing routes, and the jobs are retried, never S.
      try (Connection conn = factory.newConnection();
          Channel ch = conn.createChannel()) {
        ch.exchangeDelete(exchange);
      }
      try (java.sql.Connection c = x.dataSource().getConnection()) {
        for (int i = 0; i < 5; i++) {
          outbox.enqueue(
              c,
              OutboxMessage.builder()
                  .operationId("after-delete-" + suffix + "-" + i)
                  .destination("emails")
                  .payload("{}")
                  .build());
        }
      }
      x.awaitCondition(
          "the jobs after the exchange was deleted to die unroutable",
          Duration.ofSeconds(90),
          () -> x.count("operation_id LIKE 'after-delete-%' AND state = 'D'") == 5);
      assertEquals(
          100,
          x.count("destination = 'emails' AND state = 'S'"),
          "nothing sent to the re-declared exchange");
      assertEquals(
          0, x.attempts("error_class = 'RabbitMqConfirmTimeout'"), "never a confirm timeout");
      System.out.printf(
          "RABBITMQ confirmed=100 unroutable_dead=%d unroutable_attempts=%d%n",
          x.count("state = 'D'"), x.attempts("error_class = 'RabbitMqUnroutable'"));
    } finally {
      cleanUp(factory, exchange, queue);
    }
  }

  /**
   * {@code declare-exchanges=false}: a missing exchange is refused by the broker (the channel is
   * closed with 404 NOT_FOUND); each attempt is a retry with that reason at once, and once the
   * exchange exists the same relay delivers, on a new channel. Then the exchange is deleted and
   * re-created while the relay runs, and the broker closes the relay's connection ({@code
   * rabbitmqctl close_connection}): each time the jobs are retried and then delivered.
   */
  @Test
  void aRefusedOrClosedChannelIsARetryWithTheBrokersReasonAndConfirmsComeBack() throws Exception {
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String exchange = "outbox-it-missing-" + suffix;
    String queue = "outbox-it-missing-" + suffix;
    String routingKey = "it.orders." + suffix;
    ConnectionFactory factory = factory(SHARED_PORT);
    try (ChaosExperiment x = ChaosExperiment.start("rabbitmq-refusals")) {
      Map<String, String> config = relayConfig(SHARED_PORT, exchange);
      config.put("outbox.rabbitmq.declare-exchanges", "false");
      config.put("outbox.destinations.orders.type", "rabbitmq");
      config.put("outbox.destinations.orders.routing-key", routingKey);
      config.put("outbox.relay.max-attempts", "1000");
      ServiceProcess relay = x.startRelay(config);
      Outbox outbox = new Outbox(OutboxConfig.builder().destinations("orders").build());

      enqueue(x, outbox, "orders", "missing-" + suffix, 5);
      x.awaitCondition(
          "attempts refused for the missing exchange",
          Duration.ofSeconds(60),
          () -> x.attempts("error_message LIKE '%NOT_FOUND - no exchange%'") >= 10);
      assertEquals(0, x.count("state = 'S'"), "nothing sent to a missing exchange");
      for (String lastError : x.rows("SELECT last_error FROM outbox_message")) {
        assertTrue(lastError.contains("404 NOT_FOUND - no exchange '" + exchange + "'"), lastError);
      }
      declareQueue(factory, exchange, queue, routingKey);
      x.awaitCondition(
          "the jobs delivered once the exchange exists",
          Duration.ofSeconds(60),
          () -> x.count("state = 'S'") == 5);

      // Deleted and re-created while the relay runs.
      try (Connection conn = factory.newConnection();
          Channel ch = conn.createChannel()) {
        ch.exchangeDelete(exchange);
      }
      enqueue(x, outbox, "orders", "deleted-" + suffix, 5);
      x.awaitCondition(
          "attempts refused while the exchange is gone",
          Duration.ofSeconds(60),
          () ->
              x.count(
                      "operation_id LIKE 'deleted-%' AND last_error LIKE '%NOT_FOUND - no exchange%'")
                  == 5);
      declareQueue(factory, exchange, queue, routingKey);
      x.awaitCondition(
          "the jobs delivered once the exchange is back",
          Duration.ofSeconds(60),
          () -> x.count("state = 'S'") == 10);

      // The broker closes the relay's connection (only that one).
      String closed = closeConnectionOf(relay);
      enqueue(x, outbox, "orders", "reconnected-" + suffix, 5);
      x.awaitCondition(
          "the jobs delivered after the broker closed the connection",
          Duration.ofSeconds(60),
          () -> x.count("state = 'S'") == 15);

      Map<String, List<GetResponse>> byOp = byMessageId(drain(factory, queue, 15));
      for (String prefix : List.of("missing-", "deleted-", "reconnected-")) {
        for (int i = 0; i < 5; i++) {
          assertTrue(
              byOp.containsKey(prefix + suffix + "-" + i), prefix + i + " reached the queue");
        }
      }
      assertEquals(
          0, x.attempts("error_class = 'RabbitMqConfirmTimeout'"), "never a confirm timeout");
      long slowest =
          x
              .rows(
                  "SELECT EXTRACT(EPOCH FROM (finished_at - started_at)) * 1000 FROM outbox_attempt")
              .stream()
              .mapToLong(v -> (long) Double.parseDouble(v))
              .max()
              .orElse(0);
      assertTrue(
          slowest < 5_000,
          "a refused attempt ends at once, not after the 10 s confirm timeout: " + slowest);
      System.out.printf(
          "RABBITMQ refusals: refused_attempts=%d slowest_attempt_ms=%d closed_connection=%s"
              + " messages=%d jobs=15%n",
          x.attempts("outcome = 'RETRY'"),
          slowest,
          closed,
          byOp.values().stream().mapToInt(List::size).sum());
    } finally {
      cleanUp(factory, exchange, queue);
    }
  }

  /** A node of the test's own is stopped and started: retries meanwhile, deliveries after. */
  @Test
  void aRestartedBrokerNodeTakesDeliveriesAgain() throws Exception {
    String exchange = "outbox";
    String queue = "outbox-it-restart";
    String routingKey = "it.restart";
    try (PrivateRabbitMq node =
            PrivateRabbitMq.startFresh(Path.of("target", "rabbitmq-restart-it"));
        ChaosExperiment x = ChaosExperiment.start("rabbitmq-restart")) {
      ConnectionFactory factory = factory(node.port());
      declareQueue(factory, exchange, queue, routingKey);
      Map<String, String> config = relayConfig(node.port(), exchange);
      config.put("outbox.destinations.emails.type", "rabbitmq");
      config.put("outbox.destinations.emails.routing-key", routingKey);
      config.put("outbox.relay.max-attempts", "1000");
      ServiceProcess relay = x.startRelay(config);
      Outbox outbox = new Outbox(OutboxConfig.builder().destinations("emails").build());
      enqueue(x, outbox, "emails", "before", 10);
      x.awaitCondition(
          "10 jobs confirmed", Duration.ofSeconds(60), () -> x.count("state = 'S'") == 10);

      node.stop();
      enqueue(x, outbox, "emails", "during", 10);
      x.awaitCondition(
          "attempts to fail while the node is down",
          Duration.ofSeconds(60),
          () -> x.attempts("outcome = 'RETRY'") >= 10);
      assertEquals(10, x.count("state = 'S'"), "nothing is marked sent without a confirm");
      node.start();
      x.awaitCondition(
          "the backlog to drain after the node restarted",
          Duration.ofSeconds(120),
          () -> x.count("state = 'S'") == 20);
      Map<String, List<GetResponse>> byOp = byMessageId(drain(factory, queue, 20));
      for (int i = 0; i < 10; i++) {
        assertTrue(
            byOp.containsKey("before-" + i), "before-" + i + " survived the restart (durable)");
        assertTrue(byOp.containsKey("during-" + i), "during-" + i + " delivered after the restart");
      }
      long twice = byOp.values().stream().filter(l -> l.size() > 1).count();
      System.out.printf(
          "RABBITMQ restart messages=%d jobs=20 retry_attempts=%d published_twice=%d%n",
          byOp.values().stream().mapToInt(List::size).sum(),
          x.attempts("outcome = 'RETRY'"),
          twice);
      assertTrue(
          relay.metric(
                  "outbox_delivery_attempts_total", "destination=\"emails\"", "outcome=\"retry\"")
              > 0);
    }
  }

  private static Map<String, String> relayConfig(int port, String exchange) {
    Map<String, String> config = new LinkedHashMap<>();
    config.put("rabbitmq-host", SHARED_HOST);
    config.put("rabbitmq-port", Integer.toString(port));
    config.put("rabbitmq-username", "guest");
    config.put("rabbitmq-password", "guest");
    config.put("outbox.rabbitmq.exchange", exchange);
    return config;
  }

  private static void enqueue(
      ChaosExperiment x, Outbox outbox, String destination, String prefix, int n) throws Exception {
    try (java.sql.Connection c = x.dataSource().getConnection()) {
      c.setAutoCommit(false);
      for (int i = 0; i < n; i++) {
        outbox.enqueue(
            c,
            OutboxMessage.builder()
                .operationId(prefix + "-" + i)
                .destination(destination)
                .payload("{\"n\":" + i + "}")
                .build());
      }
      c.commit();
    }
  }

  private static ConnectionFactory factory(int port) {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setHost(SHARED_HOST);
    factory.setPort(port);
    return factory;
  }

  /**
   * {@code rabbitmqctl close_connection} of the relay's connection only, found by its name ({@code
   * outbox-relay <host>/<pid>/...}); returns that name.
   */
  private static String closeConnectionOf(ServiceProcess relay) throws Exception {
    String list =
        rabbitmqctl(
            "list_connections", "--no-table-headers", "--quiet", "pid", "client_properties");
    for (String line : list.split("\n")) {
      if (line.contains("outbox-relay ") && line.contains("/" + relay.pid() + "/")) {
        String pid = line.substring(0, line.indexOf('>') + 1).strip();
        rabbitmqctl("close_connection", pid, "closed by RabbitMqSinkIT");
        return pid;
      }
    }
    throw new AssertionError("no connection of relay pid " + relay.pid() + " in:\n" + list);
  }

  private static void declareQueue(
      ConnectionFactory factory, String exchange, String queue, String routingKey)
      throws Exception {
    try (Connection conn = factory.newConnection();
        Channel ch = conn.createChannel()) {
      // Same properties as the relay declares (durable topic), or one of the two declarations
      // fails.
      ch.exchangeDeclare(exchange, "topic", true);
      ch.queueDeclare(queue, true, false, false, null);
      ch.queueBind(queue, exchange, routingKey);
    }
  }

  private static void cleanUp(ConnectionFactory factory, String exchange, String queue)
      throws Exception {
    try (Connection conn = factory.newConnection();
        Channel ch = conn.createChannel()) {
      ch.queueDelete(queue);
      ch.exchangeDelete(exchange);
    }
  }

  /**
   * Takes messages (acknowledging them) until {@code atLeast} arrived and a second passed quietly.
   */
  private static List<GetResponse> drain(ConnectionFactory factory, String queue, int atLeast)
      throws Exception {
    List<GetResponse> out = new ArrayList<>();
    try (Connection conn = factory.newConnection();
        Channel ch = conn.createChannel()) {
      Conditions.collect(
          Duration.ofSeconds(60),
          Duration.ofMillis(50),
          Duration.ofSeconds(1),
          () -> {
            for (GetResponse r = ch.basicGet(queue, true);
                r != null;
                r = ch.basicGet(queue, true)) {
              out.add(r);
            }
          },
          () -> out.size() >= atLeast);
    }
    return out;
  }

  private static Map<String, List<GetResponse>> byMessageId(List<GetResponse> messages) {
    Map<String, List<GetResponse>> byOp = new HashMap<>();
    messages.forEach(
        r -> byOp.computeIfAbsent(r.getProps().getMessageId(), k -> new ArrayList<>()).add(r));
    return byOp;
  }

  /**
   * One channel per destination, one queue: RabbitMQ keeps publish order, so FIFO per key holds end
   * to end.
   */
  private static void assertInIdOrderPerKey(List<GetResponse> inQueueOrder) {
    Map<String, Long> lastIdPerKey = new HashMap<>();
    for (GetResponse r : inQueueOrder) {
      String body = new String(r.getBody(), StandardCharsets.UTF_8);
      int n = Integer.parseInt(body.replaceAll("\\D", ""));
      if (n % 2 != 0) {
        continue;
      }
      String key = "customer-" + (n % 10);
      long id = Long.parseLong(header(r, "outbox-message-id"));
      Long previous = lastIdPerKey.put(key, id);
      assertTrue(
          previous == null || previous < id, key + " in id order: " + previous + " then " + id);
    }
  }

  private static String header(GetResponse r, String name) {
    Object v = r.getProps().getHeaders() == null ? null : r.getProps().getHeaders().get(name);
    return v == null ? null : v.toString();
  }

  private static String rabbitmqctl(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("rabbitmqctl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(
        p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0,
        "rabbitmqctl " + args[0] + ": " + out);
    return out;
  }
}
