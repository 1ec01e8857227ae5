package dev.outboxrelay.demo.order;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.demo.DemoDatabase;
import dev.outboxrelay.outbox.DuplicateOperationException;
import dev.outboxrelay.outbox.EnqueueResult;
import dev.outboxrelay.outbox.InvalidMessageException;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.orm.TransactionalOutbox;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.TransactionalException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.hibernate.exception.ConstraintViolationException;
import org.junit.jupiter.api.Test;

/** The promise: an order and its outbox job commit together or not at all. */
@QuarkusTest
class OrderTransactionTest {

  @Inject OrderService orders;
  @Inject TransactionalOutbox outbox;
  @Inject EntityManager em;
  @Inject DemoDatabase db;

  @Test
  void failureAfterPlacingRollsBackOrderAndJob() {
    AtomicReference<PlacedOrder> placed = new AtomicReference<>();

    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () ->
                QuarkusTransaction.requiringNew()
                    .run(
                        () -> {
                          placed.set(orders.place("Rollback Ltd", 700L));
                          throw new IllegalStateException("business rule failed after the enqueue");
                        }));

    assertEquals("business rule failed after the enqueue", e.getMessage());
    assertTrue(placed.get().messageId() > 0, "the job was inserted inside the transaction");
    assertTrue(orders.find(placed.get().id()).isEmpty());
    assertTrue(db.outbox().findByOperationId(placed.get().operationId()).isEmpty());
  }

  @Test
  void rejectedEnqueueRollsBackTheOrder() {
    AtomicLong orderId = new AtomicLong();
    long jobsBefore = db.outboxJobs();

    InvalidMessageException e =
        assertThrows(
            InvalidMessageException.class,
            () ->
                QuarkusTransaction.requiringNew()
                    .run(
                        () -> {
                          Order order = persistOrder("Unknown Destination Inc");
                          orderId.set(order.getId());
                          outbox.enqueue(
                              message("order-" + order.getId() + "/shipping", "shipping", "{}"));
                        }));

    assertEquals("destination", e.field());
    assertTrue(e.getMessage().contains("shipping"), e.getMessage());
    assertTrue(orderId.get() > 0, "the order was inserted inside the transaction");
    assertTrue(orders.find(orderId.get()).isEmpty());
    assertEquals(jobsBefore, db.outboxJobs());
  }

  @Test
  void businessFailureAfterEnqueueLeavesNoJob() {
    String operationId = "null-customer-after-enqueue/billing";

    // The database rejects the order (customer is NOT NULL) after the job was written on the
    // same connection. Plain SQL, because Hibernate would refuse the null before the database.
    ConstraintViolationException e =
        assertThrows(
            ConstraintViolationException.class,
            () ->
                QuarkusTransaction.requiringNew()
                    .run(
                        () -> {
                          outbox.enqueue(message(operationId, "billing", "{\"orderId\":0}"));
                          em.createNativeQuery(
                                  "INSERT INTO orders (customer, amount_cents) VALUES (NULL, 100)")
                              .executeUpdate();
                        }));

    assertEquals(ConstraintViolationException.ConstraintKind.NOT_NULL, e.getKind());
    assertTrue(db.outbox().findByOperationId(operationId).isEmpty());
  }

  @Test
  void enqueueWithoutTransactionFailsAndWritesNothing() {
    String operationId = "no-transaction/billing";

    assertThrows(
        TransactionalException.class, () -> outbox.enqueue(message(operationId, "billing", "{}")));

    assertTrue(db.outbox().findByOperationId(operationId).isEmpty());
  }

  @Test
  void sameOperationIdAndPayloadIsEnqueuedOnce() {
    OutboxMessage job = message("idempotent/billing", "billing", "{\"orderId\":1}");
    long jobsBefore = db.outboxJobs();

    EnqueueResult first = enqueueInNewTransaction(job);
    EnqueueResult second = enqueueInNewTransaction(job);

    assertTrue(first.created());
    assertFalse(second.created());
    assertEquals(first.messageId(), second.messageId());
    assertEquals(jobsBefore + 1, db.outboxJobs());
    assertEquals(
        first.messageId(), db.outbox().findByOperationId("idempotent/billing").orElseThrow().id());
  }

  @Test
  void sameOperationIdWithDifferentPayloadIsRejected() {
    EnqueueResult first =
        enqueueInNewTransaction(message("conflict/billing", "billing", "{\"v\":1}"));

    DuplicateOperationException e =
        assertThrows(
            DuplicateOperationException.class,
            () -> enqueueInNewTransaction(message("conflict/billing", "billing", "{\"v\":2}")));

    assertEquals("operation_id", e.field());
    assertEquals(first.messageId(), e.existingMessageId());
    assertEquals(
        "{\"v\":1}", db.outbox().findByOperationId("conflict/billing").orElseThrow().payload());
  }

  private Order persistOrder(String customer) {
    Order order = new Order(customer, 100);
    em.persist(order);
    em.flush();
    return order;
  }

  private EnqueueResult enqueueInNewTransaction(OutboxMessage job) {
    return QuarkusTransaction.requiringNew().call(() -> outbox.enqueue(job));
  }

  private static OutboxMessage message(String operationId, String destination, String payload) {
    return OutboxMessage.builder()
        .operationId(operationId)
        .destination(destination)
        .payload(payload)
        .contentType("application/json")
        .build();
  }
}
