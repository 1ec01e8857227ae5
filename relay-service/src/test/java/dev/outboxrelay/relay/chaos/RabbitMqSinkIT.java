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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The RabbitMQ sink against the RabbitMQ on localhost: messages are persistent, carry the operation
 * ID as AMQP message-id, the relay headers and the job's own; a job is {@code S} only after the
 * publisher confirm; a broker outage (the application stopped, so every channel is closed) turns
 * into retries that deliver once the broker is back. The test binds its own durable queue to the
 * relay's exchange under a routing key of its own, so it never reads anyone else's messages.
 */
class RabbitMqSinkIT {
  static final String EXCHANGE = "outbox";

  @Test
  void jobsBecomeConfirmedPersistentMessagesAndSurviveABrokerOutage() throws Exception {
    String suffix = UUID.randomUUID().toString().substring(0, 8);
    String queue = "outbox-it-" + suffix;
    String routingKey = "it.emails." + suffix;
    ConnectionFactory factory = new ConnectionFactory();
    factory.setHost("127.0.0.1");
    factory.setPort(5672);
    try (ChaosExperiment x = ChaosExperiment.start("rabbitmq-sink")) {
      declareQueue(factory, queue, routingKey);
      ServiceProcess relay = x.startRelay(Map.of(
          "rabbitmq-host", "127.0.0.1",
          "rabbitmq-port", "5672",
          "rabbitmq-username", "guest",
          "rabbitmq-password", "guest",
          "outbox.destinations.emails.type", "rabbitmq",
          "outbox.destinations.emails.routing-key", routingKey,
          "outbox.destinations.emails.request-timeout", "3s"));
      Outbox outbox = new Outbox(OutboxConfig.builder().destinations("emails").build());
      List<String> ops = new ArrayList<>();
      try (java.sql.Connection c = x.dataSource().getConnection()) {
        c.setAutoCommit(false);
        for (int i = 0; i < 100; i++) {
          String op = "rabbit-" + suffix + "-" + i;
          ops.add(op);
          OutboxMessage.Builder b = OutboxMessage.builder().operationId(op).destination("emails")
              .payload("{\"n\":" + i + "}").header("X-Trace", "t-" + i);
          if (i % 2 == 0) {
            b.orderingKey("customer-" + (i % 10));
          }
          outbox.enqueue(c, b.build());
        }
        c.commit();
      }
      x.awaitCondition("100 jobs confirmed", Duration.ofSeconds(90), () -> x.count("state = 'S'") == 100);

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

      // Outage: the broker application stops (every connection and channel closes); new jobs fail
      // their attempts and wait in backoff; once it is back they are delivered.
      rabbitmqctl("stop_app");
      try {
        try (java.sql.Connection c = x.dataSource().getConnection()) {
          c.setAutoCommit(false);
          for (int i = 100; i < 110; i++) {
            outbox.enqueue(c, OutboxMessage.builder().operationId("rabbit-" + suffix + "-" + i)
                .destination("emails").payload("{\"n\":" + i + "}").build());
          }
          c.commit();
        }
        x.awaitCondition("attempts to fail while the broker is down", Duration.ofSeconds(60),
            () -> x.attempts("outcome = 'RETRY'") >= 10);
        assertEquals(100, x.count("state = 'S'"), "nothing is marked sent without a confirm");
      } finally {
        rabbitmqctl("start_app");
      }
      x.awaitCondition("the backlog to drain after the broker returned", Duration.ofSeconds(120),
          () -> x.count("state = 'S'") == 110);
      Map<String, List<GetResponse>> after = byMessageId(drain(factory, queue, 10));
      for (int i = 100; i < 110; i++) {
        assertTrue(after.containsKey("rabbit-" + suffix + "-" + i), i + " reached the queue after the outage");
      }
      long twice = after.values().stream().filter(l -> l.size() > 1).count();
      System.out.printf("RABBITMQ messages=%d jobs=110 retry_attempts=%d messages_published_twice=%d%n",
          100 + after.values().stream().mapToInt(List::size).sum(), x.attempts("outcome = 'RETRY'"), twice);
      assertTrue(relay.metric("outbox_delivery_attempts_total", "destination=\"emails\"", "outcome=\"retry\"") > 0);
    } finally {
      try (Connection conn = factory.newConnection(); Channel ch = conn.createChannel()) {
        ch.queueDelete(queue);
      }
    }
  }

  private static void declareQueue(ConnectionFactory factory, String queue, String routingKey) throws Exception {
    try (Connection conn = factory.newConnection(); Channel ch = conn.createChannel()) {
      // Same properties as the relay's channel declares (application.properties), or one fails.
      ch.exchangeDeclare(EXCHANGE, "topic", true);
      ch.queueDeclare(queue, true, false, false, null);
      ch.queueBind(queue, EXCHANGE, routingKey);
    }
  }

  /** Takes messages (acknowledging them) until {@code atLeast} arrived and a second passed quietly. */
  private static List<GetResponse> drain(ConnectionFactory factory, String queue, int atLeast) throws Exception {
    List<GetResponse> out = new ArrayList<>();
    try (Connection conn = factory.newConnection(); Channel ch = conn.createChannel()) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      long quietUntil = Long.MAX_VALUE;
      while (System.nanoTime() < Math.min(deadline, quietUntil)) {
        GetResponse r = ch.basicGet(queue, true);
        if (r == null) {
          Thread.sleep(50);
        } else {
          out.add(r);
        }
        if (out.size() >= atLeast && quietUntil == Long.MAX_VALUE) {
          quietUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(1); // late duplicates too
        }
      }
    }
    return out;
  }

  private static Map<String, List<GetResponse>> byMessageId(List<GetResponse> messages) {
    Map<String, List<GetResponse>> byOp = new HashMap<>();
    messages.forEach(r -> byOp.computeIfAbsent(r.getProps().getMessageId(), k -> new ArrayList<>()).add(r));
    return byOp;
  }

  /** One channel, one queue: RabbitMQ keeps publish order, so FIFO per key holds end to end. */
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
      assertTrue(previous == null || previous < id, key + " in id order: " + previous + " then " + id);
    }
  }

  private static String header(GetResponse r, String name) {
    Object v = r.getProps().getHeaders() == null ? null : r.getProps().getHeaders().get(name);
    return v == null ? null : v.toString();
  }

  private static void rabbitmqctl(String command) throws Exception {
    Process p = new ProcessBuilder("rabbitmqctl", command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, "rabbitmqctl " + command + ": " + out);
  }
}
