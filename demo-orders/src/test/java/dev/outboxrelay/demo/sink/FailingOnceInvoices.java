package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.TransientFailureException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The sink's effect with an outage on demand: for an operation ID given to {@link #failOnce} the
 * handler writes its invoice, then throws {@link TransientFailureException} once, so a failure that
 * committed anything would leave a second invoice. Enabled only by the broker consumer tests'
 * profiles.
 */
@Alternative
@ApplicationScoped
public class FailingOnceInvoices extends Invoices {
  // Static: the tests reach them without injecting this bean, which only their profiles enable.
  private static final Set<String> failOnce = ConcurrentHashMap.newKeySet();
  private static final Map<String, Integer> failures = new ConcurrentHashMap<>();

  static void failOnce(String operationId) {
    failOnce.add(operationId);
  }

  static int failures(String operationId) {
    return failures.getOrDefault(operationId, 0);
  }

  @Override
  public String apply(Connection connection, InboxDelivery delivery) throws SQLException {
    String outcome = super.apply(connection, delivery);
    if (failOnce.remove(delivery.operationId())) {
      failures.merge(delivery.operationId(), 1, Integer::sum);
      throw new TransientFailureException("simulated outage of the billing database", null);
    }
    return outcome;
  }
}
