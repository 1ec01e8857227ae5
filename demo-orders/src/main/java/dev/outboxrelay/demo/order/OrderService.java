package dev.outboxrelay.demo.order;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.demo.web.InvalidInputException;
import dev.outboxrelay.outbox.EnqueueResult;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.orm.TransactionalOutbox;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Places orders. Every public method is {@link Transactional} (joining a caller's transaction if
 * there is one): the order row and its outbox job commit together, and any exception rolls both
 * back.
 */
@ApplicationScoped
@Transactional
public class OrderService {

  @Inject EntityManager em;
  @Inject TransactionalOutbox outbox;
  @Inject ObjectMapper json;

  /**
   * Validates, persists the order, then enqueues its billing job on the same transaction.
   *
   * @throws InvalidInputException {@code customer} or {@code amountCents} is invalid
   * @throws dev.outboxrelay.outbox.InvalidMessageException the outbox rejected the job
   */
  public PlacedOrder place(String customer, Long amountCents) {
    validate(customer, amountCents);
    Order order = new Order(customer, amountCents);
    em.persist(order);
    em.flush(); // the id is part of the operation ID
    String operationId = Order.billingOperationId(order.getId());
    EnqueueResult job =
        outbox.enqueue(
            OutboxMessage.builder()
                .operationId(operationId)
                .destination(Order.BILLING_DESTINATION)
                .payload(billingPayload(order))
                .contentType(OutboxMessage.DEFAULT_CONTENT_TYPE)
                .build());
    return new PlacedOrder(order.getId(), operationId, job.messageId());
  }

  public Optional<Order> find(long id) {
    return Optional.ofNullable(em.find(Order.class, id));
  }

  private static void validate(String customer, Long amountCents) {
    if (customer == null || customer.isBlank()) {
      throw new InvalidInputException("customer", "customer is required");
    }
    if (customer.length() > Order.MAX_CUSTOMER_LENGTH) {
      throw new InvalidInputException(
          "customer",
          "customer is "
              + customer.length()
              + " characters long; the limit is "
              + Order.MAX_CUSTOMER_LENGTH);
    }
    if (amountCents == null) {
      throw new InvalidInputException("amountCents", "amountCents is required");
    }
    if (amountCents <= 0) {
      throw new InvalidInputException(
          "amountCents", "amountCents must be positive, was " + amountCents);
    }
  }

  /** {@code {"orderId":..,"customer":..,"amountCents":..}}, what billing needs to invoice. */
  private String billingPayload(Order order) {
    Map<String, Object> payload = new LinkedHashMap<>();
    payload.put("orderId", order.getId());
    payload.put("customer", order.getCustomer());
    payload.put("amountCents", order.getAmountCents());
    try {
      return json.writeValueAsString(payload);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(
          "cannot write the billing payload of order " + order.getId(), e);
    }
  }
}
