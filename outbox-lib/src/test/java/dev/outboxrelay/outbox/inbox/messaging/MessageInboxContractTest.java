package dev.outboxrelay.outbox.inbox.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.inbox.Inbox;
import dev.outboxrelay.outbox.inbox.InboxConfig;
import dev.outboxrelay.outbox.inbox.InboxConflictException;
import dev.outboxrelay.outbox.inbox.InboxHandler;
import dev.outboxrelay.outbox.inbox.InboxHandlerException;
import dev.outboxrelay.outbox.inbox.InboxSchema;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import dev.outboxrelay.outbox.inbox.TransientFailureException;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MessageInbox} on real broker messages: each test publishes as the relay's sink does, reads
 * the real delivery back with the broker's client, wraps it in a SmallRye {@link Message} carrying
 * the connector's own incoming metadata, and acknowledges through the broker (Kafka: offset commit;
 * RabbitMQ: basic.ack). The effect is counted in a business table of its own, on PostgreSQL.
 */
abstract class MessageInboxContractTest {
  static final String EFFECT = "inbox_msg_it_effect";

  DataSource ds;
  final AtomicInteger handlerRuns = new AtomicInteger();

  /** What happened to each consumed message, in order: {@code ack} or the nack's exception. */
  final List<Object> settled = new ArrayList<>();

  /** The relay's destination name this consumer serves. */
  abstract String destination();

  abstract DeliveryReader reader();

  /** Publishes as the relay's sink does; {@code operationId} null: without one. */
  abstract void publish(String operationId, String payload, long jobId) throws Exception;

  /**
   * The next delivery from the broker as a SmallRye message: its ack settles it at the broker and
   * records {@code ack} in {@link #settled}; its nack records the reason and makes the broker
   * deliver it again.
   */
  abstract Message<?> next() throws Exception;

  /** The consumer dies without acknowledging what it holds; a new one takes over. */
  abstract void crashAndReconnect() throws Exception;

  @BeforeEach
  void setUpDatabase() {
    ds = TestDatabases.postgres();
    InboxSchema.migrate(ds);
    TestDatabases.execute(
        ds,
        "CREATE TABLE IF NOT EXISTS "
            + EFFECT
            + " (operation_id VARCHAR(200) NOT NULL, body VARCHAR(2000))");
    TestDatabases.update(ds, "DELETE FROM " + EFFECT);
    TestDatabases.update(ds, "DELETE FROM outbox_inbox WHERE destination = ?", destination());
  }

  MessageInbox consumer(InboxHandler handler) {
    return new MessageInbox(
        CommittingInbox.jdbc(ds, new Inbox(InboxConfig.defaults())), reader(), handler);
  }

  /** The effect: one row in the business table per application, nothing unique about it. */
  InboxHandler effect() {
    return (c, d) -> {
      handlerRuns.incrementAndGet();
      try (PreparedStatement ps =
          c.prepareStatement("INSERT INTO " + EFFECT + " (operation_id, body) VALUES (?, ?)")) {
        ps.setString(1, d.operationId());
        ps.setString(2, d.payloadText());
        ps.executeUpdate();
      }
      return "applied " + d.operationId();
    };
  }

  long effects(String operationId) {
    return TestDatabases.queryLong(
        ds, "SELECT COUNT(*) FROM " + EFFECT + " WHERE operation_id = ?", operationId);
  }

  long inboxRows(String operationId) {
    return TestDatabases.queryLong(
        ds,
        "SELECT COUNT(*) FROM outbox_inbox WHERE destination = ? AND operation_id = ?",
        destination(),
        operationId);
  }

  /**
   * A SmallRye message around a broker delivery: {@code ack}/{@code nack} settle it at the broker.
   */
  <T> Message<T> wrap(T payload, Object metadata, Runnable ack, Runnable nack) {
    return Message.of(
        payload,
        List.of(metadata),
        () -> {
          ack.run();
          settled.add("ack");
          return CompletableFuture.completedFuture(null);
        },
        reason -> {
          nack.run();
          settled.add(reason);
          return CompletableFuture.completedFuture(null);
        });
  }

  static void await(CompletionStage<Void> stage) throws Exception {
    stage
        .toCompletableFuture()
        .get(Duration.ofSeconds(30).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  @Test
  void appliesOnceAndAcknowledgesOnlyAfterTheCommit() throws Exception {
    publish("op-1", "{\"n\":1}", 1);
    Message<?> m = next();
    List<Long> visibleAtAck = new ArrayList<>();
    // Read on another connection while the ack runs: the effect must already be committed.
    Message<?> watched =
        m.withAck(
            () -> {
              visibleAtAck.add(effects("op-1"));
              return m.ack();
            });
    await(consumer(effect()).consume(watched));
    assertEquals(List.of(1L), visibleAtAck, "the effect was committed when the ack ran");
    assertEquals(List.of("ack"), settled);
    assertEquals(1, effects("op-1"));
    assertEquals(1, inboxRows("op-1"));
  }

  @Test
  void redeliveryAfterACrashBetweenCommitAndAckAppliesNothingTwice() throws Exception {
    publish("op-2", "{\"n\":2}", 2);
    Message<?> first = next();
    // The consumer commits, then dies before its ack reaches the broker.
    await(consumer(effect()).consume(first.withAck(() -> CompletableFuture.completedFuture(null))));
    assertEquals(1, effects("op-2"));
    crashAndReconnect();
    Message<?> again = next();
    await(consumer(effect()).consume(again));
    assertEquals(List.of("ack"), settled, "the redelivery is acknowledged");
    assertEquals(1, effects("op-2"), "applied once");
    assertEquals(1, handlerRuns.get(), "the handler did not run for the redelivery");
    assertEquals(
        2,
        TestDatabases.queryLong(
            ds,
            "SELECT deliveries FROM outbox_inbox WHERE destination = ?" + " AND operation_id = ?",
            destination(),
            "op-2"));
  }

  @Test
  void aTransientHandlerFailureNacksWithoutRecordingAndTheRedeliveryApplies() throws Exception {
    publish("op-3", "{\"n\":3}", 3);
    InboxHandler flaky =
        (c, d) -> {
          if (handlerRuns.get() == 0) {
            handlerRuns.incrementAndGet();
            throw new TransientFailureException("billing database down", Duration.ofSeconds(1));
          }
          return effect().apply(c, d);
        };
    await(consumer(flaky).consume(next()));
    InboxHandlerException failure = assertInstanceOf(InboxHandlerException.class, settled.get(0));
    assertTrue(failure.isTransient());
    assertEquals(0, inboxRows("op-3"), "nothing recorded");
    assertEquals(0, effects("op-3"));
    await(consumer(flaky).consume(next()));
    assertEquals("ack", settled.get(1));
    assertEquals(1, effects("op-3"));
    assertEquals(1, inboxRows("op-3"));
  }

  @Test
  void aDifferentPayloadUnderAnAppliedIdIsNackedAsAConflict() throws Exception {
    publish("op-4", "{\"n\":4}", 4);
    await(consumer(effect()).consume(next()));
    publish("op-4", "{\"n\":\"other\"}", 5);
    await(consumer(effect()).consume(next()));
    assertEquals("ack", settled.get(0));
    InboxConflictException conflict =
        assertInstanceOf(InboxConflictException.class, settled.get(1));
    assertEquals("op-4", conflict.operationId());
    assertEquals(1, effects("op-4"));
    assertEquals(
        1,
        TestDatabases.queryLong(
            ds, "SELECT COUNT(*) FROM " + EFFECT + " WHERE body = ?", "{\"n\":4}"),
        "the first payload's effect stands");
    assertEquals(
        1,
        TestDatabases.queryLong(
            ds,
            "SELECT deliveries FROM outbox_inbox WHERE destination = ?" + " AND operation_id = ?",
            destination(),
            "op-4"),
        "the conflicting delivery is not counted");
  }

  @Test
  void aMessageWithoutAnOperationIdIsNackedNamingTheField() throws Exception {
    publish(null, "{\"n\":6}", 6);
    await(consumer(effect()).consume(next()));
    InvalidDeliveryException refused =
        assertInstanceOf(InvalidDeliveryException.class, settled.get(0));
    assertEquals(expectedIdField(), refused.field());
    assertEquals(0, handlerRuns.get());
    assertEquals(
        0,
        TestDatabases.queryLong(
            ds, "SELECT COUNT(*) FROM outbox_inbox WHERE destination = ?", destination()));
  }

  /** The header or property the reader names when the operation ID is missing. */
  abstract String expectedIdField();
}
