package dev.outboxrelay.demo.sink;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.List;
import java.util.Set;

/**
 * The test profile of a broker consumer test ({@link BillingConsumersKafkaTest}, {@link
 * BillingConsumersRabbitMqTest}): the config profiles {@code test} and the broker's (under which
 * application.properties configures its channel), {@link FailingOnceInvoices} as the effect, and
 * the broker as the test resource.
 */
abstract class BrokerProfile implements QuarkusTestProfile {
  private final String configProfile;
  private final Class<? extends QuarkusTestResourceLifecycleManager> broker;

  BrokerProfile(String configProfile, Class<? extends QuarkusTestResourceLifecycleManager> broker) {
    this.configProfile = configProfile;
    this.broker = broker;
  }

  @Override
  public String getConfigProfile() {
    return "test," + configProfile;
  }

  @Override
  public Set<Class<?>> getEnabledAlternatives() {
    return Set.of(FailingOnceInvoices.class);
  }

  @Override
  public List<TestResourceEntry> testResources() {
    return List.of(new TestResourceEntry(broker));
  }
}
