package dev.outboxrelay.relay.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.outbox.store.DestinationBacklog;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The per-destination backlog gauges across refreshes, on a real (simple) meter registry. */
class RelayMetricsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final RelayMetrics metrics = new RelayMetrics(registry, "orders-db");

  @Test
  void configuredDestinationsStartAtZeroNewOnesAppearAndDrainedOnesDropToZero() {
    metrics.destinations(List.of("billing", "shipping"));
    assertEquals(0.0, ready("billing"));
    assertEquals(0.0, age("shipping"));

    metrics.destinationBacklog(
        Map.of(
            "billing", new DestinationBacklog(7, Duration.ofMillis(42_500)),
            "unconfigured", new DestinationBacklog(2, Duration.ofSeconds(3))));
    assertEquals(7.0, ready("billing"));
    assertEquals(42.5, age("billing"));
    assertEquals(0.0, ready("shipping"), "nothing waiting for shipping");
    assertEquals(2.0, ready("unconfigured"), "a destination seen waiting gets its gauges");

    metrics.destinationBacklog(
        Map.of("shipping", new DestinationBacklog(1, Duration.ofSeconds(1))));
    assertEquals(0.0, ready("billing"), "billing drained: 0, not its last value");
    assertEquals(0.0, age("billing"));
    assertEquals(0.0, ready("unconfigured"));
    assertEquals(0.0, age("unconfigured"));
    assertEquals(1.0, ready("shipping"));
    assertEquals(
        new DestinationBacklog(1, Duration.ofSeconds(1)), metrics.destinationBacklog("shipping"));
  }

  private double ready(String destination) {
    return registry
        .get("outbox.destination.ready")
        .tags("source", "orders-db", "destination", destination)
        .gauge()
        .value();
  }

  private double age(String destination) {
    return registry
        .get("outbox.destination.ready.oldest.age.seconds")
        .tags("source", "orders-db", "destination", destination)
        .gauge()
        .value();
  }
}
