package dev.outboxrelay.demo.sink;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.demo.DemoDatabase;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@link BillingConsumers} running in the Quarkus application with SmallRye Reactive Messaging's
 * connectors against a real broker: every effect once in the business table ({@code demo_invoice},
 * not the inbox), acknowledged only after the commit ({@link AckWatch} counts the committed
 * invoices at each ack), a crash between commit and ack redelivers and applies nothing twice, a
 * handler failure rolls back and the redelivery applies, a conflicting payload is dead-lettered.
 * Operation IDs are unique per run, so the tests share the database and the broker.
 */
abstract class BillingConsumersContract {
  private static final Duration PATIENCE = Duration.ofSeconds(90);

  @Inject DemoDatabase db;
  @Inject AckWatch acks;

  private final String run = UUID.randomUUID().toString().substring(0, 8);

  /** The relay's destination name the consumer receives for. */
  abstract String destination();

  /**
   * Publishes as the relay's sink does: {@code payload} with {@code operationId} where the reader
   * looks.
   */
  abstract void publish(String operationId, String payload) throws Exception;

  /**
   * The payloads of {@code operationId} that reached the channel's dead-letter destination so far.
   */
  abstract List<String> deadLettered(String operationId) throws Exception;

  String op(String name) {
    return run + "-" + name;
  }

  long effects(String operationId) {
    return db.jdbc()
        .queryLong("SELECT COUNT(*) FROM demo_invoice WHERE operation_id = ?", operationId);
  }

  long deliveries(String operationId) {
    return db.jdbc()
        .queryLong(
            "SELECT COALESCE(SUM(deliveries), 0) FROM outbox_inbox"
                + " WHERE destination = ? AND operation_id = ?",
            destination(),
            operationId);
  }

  @Test
  void everyEffectAppliesOnceThoughEveryThirdMessageIsPublishedTwice() throws Exception {
    List<String> ops = new ArrayList<>();
    int published = 0;
    for (int i = 0; i < 20; i++) {
      String op = op("order-" + i);
      ops.add(op);
      publish(op, "{\"order\":" + i + "}");
      published++;
      if (i % 3 == 0) {
        publish(op, "{\"order\":" + i + "}");
        published++;
      }
    }
    int expected = published;
    await("all " + expected + " deliveries received")
        .atMost(PATIENCE)
        .until(() -> ops.stream().mapToLong(this::deliveries).sum() == expected);
    for (String op : ops) {
      assertEquals(1, effects(op), "invoices of " + op);
      int times = ops.indexOf(op) % 3 == 0 ? 2 : 1;
      await("acks of " + op).atMost(PATIENCE).until(() -> acks.effectsAtAck(op).size() == times);
      assertTrue(
          acks.effectsAtAck(op).stream().allMatch(n -> n == 1),
          "every ack of " + op + " came after its invoice committed: " + acks.effectsAtAck(op));
    }
  }

  @Test
  void aCrashBetweenCommitAndAckRedeliversAndAppliesNothingTwice() throws Exception {
    String op = op("crash");
    acks.crashAfterCommit(op);
    publish(op, "{\"order\":\"crash\"}");
    await("the redelivery after the crash").atMost(PATIENCE).until(() -> deliveries(op) == 2);
    assertTrue(acks.crashed(op), "the first delivery was committed and not acked");
    await("the redelivery acked").atMost(PATIENCE).until(() -> acks.effectsAtAck(op).size() == 1);
    assertEquals(List.of(1L), acks.effectsAtAck(op));
    assertEquals(1, effects(op), "invoices after the redelivery");
  }

  @Test
  void aHandlerFailureRollsBackIsNotAckedAndTheRedeliveryApplies() throws Exception {
    String op = op("outage");
    FailingOnceInvoices.failOnce(op);
    publish(op, "{\"order\":\"outage\"}");
    await("the redelivery applied").atMost(PATIENCE).until(() -> acks.effectsAtAck(op).size() == 1);
    assertEquals(1, FailingOnceInvoices.failures(op), "the first delivery's handler failed");
    assertEquals(1, effects(op), "the failed attempt's invoice was rolled back");
    assertEquals(1, deliveries(op), "the failed attempt recorded nothing in the inbox");
    assertEquals(List.of(1L), acks.effectsAtAck(op), "one ack, after the commit");
  }

  @Test
  void aConflictingPayloadIsDeadLetteredAndTheFirstEffectStands() throws Exception {
    String op = op("conflict");
    publish(op, "first");
    await("the first payload applied")
        .atMost(PATIENCE)
        .until(() -> acks.effectsAtAck(op).size() == 1);
    publish(op, "second");
    await("the conflicting payload dead-lettered")
        .atMost(PATIENCE)
        .until(() -> deadLettered(op), hasItem("second"));
    assertEquals(1, effects(op), "invoices of " + op);
    assertEquals(
        List.of("first"),
        db.jdbc()
            .query(
                "SELECT order_payload FROM demo_invoice WHERE operation_id = ?",
                rs -> rs.getString(1),
                op));
    assertEquals(1, deliveries(op), "the conflict counted no delivery");
    assertEquals(List.of(1L), acks.effectsAtAck(op), "the conflicting message was never acked");
  }
}
