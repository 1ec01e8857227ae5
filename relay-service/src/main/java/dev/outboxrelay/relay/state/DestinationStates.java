package dev.outboxrelay.relay.state;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import org.jboss.logging.Logger;

/**
 * The up/down state of every destination, fed by its deliveries (see {@code
 * SinkRegistry#observed}): a retried delivery (refused, timed out, 5xx, 429) is a failure, a
 * delivered one or one the sink refused for good (it answered) a success. DOWN and UP follow the
 * failed share of the deliveries in a window ({@link FailureRateWindow}, settings {@code
 * outbox.relay.destination-*}), so that a few retried deliveries among many do not flap readiness.
 * Gauge {@code outbox_destination_up{destination}} (1/0), one log line per change.
 */
public final class DestinationStates {
  private static final Logger LOG = Logger.getLogger("dev.outboxrelay.relay.destination");
  private final Map<String, StateChangeLog> states = new TreeMap<>();

  /**
   * When a destination goes DOWN and UP again: see {@link FailureRateWindow}.
   *
   * @param window {@code outbox.relay.destination-health-window}
   * @param downAfterFailures {@code outbox.relay.destination-down-after-failures}
   * @param downRate {@code outbox.relay.destination-down-failure-rate}
   * @param upRate {@code outbox.relay.destination-up-failure-rate}
   */
  public record Hysteresis(Duration window, int downAfterFailures, double downRate, double upRate) {
    /** Checks every value, naming the setting, before any destination is watched. */
    public Hysteresis {
      trigger(window, downAfterFailures, downRate, upRate);
    }

    StateChangeLog.Trigger trigger() {
      return trigger(window, downAfterFailures, downRate, upRate);
    }

    private static StateChangeLog.Trigger trigger(
        Duration window, int downAfterFailures, double downRate, double upRate) {
      return new FailureRateWindow(window, downAfterFailures, downRate, upRate);
    }
  }

  public DestinationStates(
      Collection<String> destinations,
      MeterRegistry registry,
      Clock clock,
      Duration reminderInterval,
      Hysteresis hysteresis) {
    for (String d : destinations) {
      StateChangeLog s =
          new StateChangeLog(
              "destination '" + d + "'",
              StateChangeLog.Lines.of(LOG),
              clock,
              reminderInterval,
              hysteresis.trigger());
      states.put(d, s);
      Gauge.builder("outbox.destination.up", s, StateChangeLog::upValue)
          .tag("destination", d)
          .description("1 while the destination takes deliveries, 0 while it is DOWN")
          .register(registry);
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
