package dev.outboxrelay.demo.sink;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.List;
import java.util.Set;

/**
 * The application of both broker consumer tests ({@link BillingConsumersKafkaTest}, {@link
 * BillingConsumersRabbitMqTest}): the config profiles {@code kafka} and {@code rabbitmq} at once,
 * so both channels consume, each from its own broker, in one application start instead of one per
 * broker (operation IDs are unique per test run, so the two share the database as they share each
 * broker). {@link FailingOnceInvoices} stands in for the invoices.
 */
public class BillingBrokersProfile implements QuarkusTestProfile {
  @Override
  public String getConfigProfile() {
    return "test,kafka,rabbitmq";
  }

  @Override
  public Set<Class<?>> getEnabledAlternatives() {
    return Set.of(FailingOnceInvoices.class);
  }

  @Override
  public List<TestResourceEntry> testResources() {
    return List.of(
        new TestResourceEntry(BillingConsumersKafkaTest.Broker.class),
        new TestResourceEntry(BillingConsumersRabbitMqTest.Broker.class));
  }
}
