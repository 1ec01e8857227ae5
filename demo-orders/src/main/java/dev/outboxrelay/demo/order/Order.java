package dev.outboxrelay.demo.order;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.OffsetDateTime;
import org.hibernate.annotations.Generated;

/** An order (table {@code orders}); {@code created_at} is set by the database. */
@Entity
@Table(name = "orders")
public class Order {

  /** Destination of the billing job (must be listed in {@code outbox.producer.destinations}). */
  public static final String BILLING_DESTINATION = "billing";

  /** Billing operation IDs are {@code order-<id>/billing}. */
  public static final String BILLING_OPERATION_PREFIX = "order-";

  public static final String BILLING_OPERATION_SUFFIX = "/" + BILLING_DESTINATION;
  public static final int MAX_CUSTOMER_LENGTH = 200;

  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  @Column(nullable = false, length = MAX_CUSTOMER_LENGTH)
  private String customer;

  @Column(name = "amount_cents", nullable = false)
  private long amountCents;

  @Generated
  @Column(name = "created_at", insertable = false, updatable = false)
  private OffsetDateTime createdAt;

  protected Order() {}

  public Order(String customer, long amountCents) {
    this.customer = customer;
    this.amountCents = amountCents;
  }

  /** The stable operation ID of this order's billing effect, e.g. {@code order-42/billing}. */
  public static String billingOperationId(long orderId) {
    return BILLING_OPERATION_PREFIX + orderId + BILLING_OPERATION_SUFFIX;
  }

  public Long getId() {
    return id;
  }

  public String getCustomer() {
    return customer;
  }

  public long getAmountCents() {
    return amountCents;
  }

  public OffsetDateTime getCreatedAt() {
    return createdAt;
  }
}
