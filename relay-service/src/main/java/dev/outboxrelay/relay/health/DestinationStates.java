package dev.outboxrelay.relay.health;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import org.jboss.logging.Logger;

/**
 * The up/down state of every destination, fed by its deliveries (see {@code SinkRegistry#observed}):
 * DOWN after {@code outbox.relay.destination-down-after-failures} retried deliveries in a row, UP at
 * the next delivered one (or one the sink refused for good: it answered). Gauge {@code
 * outbox_destination_up{destination}} (1/0), one log line per change.
 */
public final class DestinationStates {
  private static final Logger LOG = Logger.getLogger("dev.outboxrelay.relay.destination");
  private final Map<String, StateChangeLog> states = new TreeMap<>();

  public DestinationStates(Collection<String> destinations, MeterRegistry registry, Clock clock,
      Duration reminderInterval, int downAfterFailures) {
    if (downAfterFailures < 1) {
      throw new IllegalArgumentException("outbox.relay.destination-down-after-failures must be at least 1, was "
          + downAfterFailures);
    }
    for (String d : destinations) {
      StateChangeLog s = new StateChangeLog("destination '" + d + "'", StateChangeLog.Lines.of(LOG), clock,
          reminderInterval, downAfterFailures);
      states.put(d, s);
      Gauge.builder("outbox.destination.up", s, StateChangeLog::upValue).tag("destination", d)
          .description("1 while the destination takes deliveries, 0 while it is DOWN").register(registry);
    }
  }

  /** The state of {@code destination}; null for a destination that is not configured. */
  public StateChangeLog of(String destination) {
    return states.get(destination);
  }

  /** By destination name, in name order. */
  public Map<String, StateChangeLog> all() {
    return states;
  }
}
