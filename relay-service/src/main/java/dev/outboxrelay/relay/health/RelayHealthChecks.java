package dev.outboxrelay.relay.health;

import dev.outboxrelay.relay.claim.ClaimLoop;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.source.RelaySource;
import dev.outboxrelay.relay.state.DestinationStates;
import dev.outboxrelay.relay.state.StateChangeLog;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;

/**
 * The relay's checks. Readiness {@code outbox-relay}: one entry {@code source.<name>} per source
 * ({@code UP ...} or {@code DOWN: <reason>}: database unreachable, claims failing, backlog too
 * old); {@code outbox-destinations}: one entry {@code destination.<name>} per destination. A check
 * is DOWN while any of its entries is, and says which in {@code reason}; the other sources keep
 * delivering meanwhile. Quarkus' own datasource check is off (application.properties): one
 * unreachable database would otherwise fail readiness without naming the source.
 */
@ApplicationScoped
public class RelayHealthChecks {
  @Inject RelayService relay;
  @Inject RelayConfig config;

  @Produces
  @Liveness
  HealthCheck claimLoopAlive() {
    return () -> {
      boolean up = true;
      if (config.relay().enabled()) {
        for (RelaySource s : relay.sources()) {
          ClaimLoop loop = s.claimLoop();
          // A source still waiting for its database is not dead: readiness says DOWN for it.
          up &= loop == null || loop.running();
        }
      }
      return HealthCheckResponse.named("outbox-claim-loop").status(up).build();
    };
  }

  @Produces
  @Readiness
  HealthCheck relayReady() {
    return () -> {
      HealthCheckResponseBuilder b = HealthCheckResponse.named("outbox-relay");
      List<String> down = new ArrayList<>();
      int inFlight = 0;
      Duration oldest = Duration.ZERO;
      for (RelaySource s : relay.sources()) {
        String problem = problem(s);
        ClaimLoop loop = s.claimLoop();
        inFlight += loop == null ? 0 : loop.inFlight();
        oldest = s.oldestReadyAge().compareTo(oldest) > 0 ? s.oldestReadyAge() : oldest;
        if (problem != null) {
          down.add("source '" + s.name() + "': " + problem);
          b.withData("source." + s.name(), "DOWN: " + problem);
        } else {
          b.withData(
              "source." + s.name(),
              "UP ("
                  + s.dialect()
                  + ", oldest ready "
                  + s.oldestReadyAge().toSeconds()
                  + "s, in flight "
                  + (loop == null ? 0 : loop.inFlight())
                  + ")");
        }
        // Informational only: without notifications the claim loop still polls, so no DOWN for it.
        b.withData(
            relay.sources().size() == 1 ? "listen_notify" : "source." + s.name() + ".listen_notify",
            s.readyListenerState());
      }
      b.withData("in_flight", inFlight);
      b.withData("oldest_ready_age_seconds", oldest.toSeconds());
      return down.isEmpty()
          ? b.up().build()
          : b.down().withData("reason", String.join("; ", down)).build();
    };
  }

  /** Why {@code s} is not ready, or null. */
  private String problem(RelaySource s) {
    StateChangeLog.Status db = s.database().status();
    if (!db.up()) {
      return "database unreachable since " + db.since() + ": " + db.reason();
    }
    if (!s.started()) {
      return "not started";
    }
    String claimError = s.claimLoop().lastError();
    if (claimError != null && config.relay().enabled()) {
      return "claiming fails: " + claimError;
    }
    Duration age = s.oldestReadyAge();
    Duration limit = config.relay().readyMaxBacklogAge();
    if (age.compareTo(limit) > 0) {
      return "the oldest ready job is "
          + age.toSeconds()
          + "s old, over outbox.relay.ready-max-backlog-age="
          + limit.toSeconds()
          + "s: the backlog is not draining (sink down, relays stuck or too few)";
    }
    return null;
  }

  @Produces
  @Readiness
  HealthCheck destinationsReady() {
    return () -> {
      HealthCheckResponseBuilder b = HealthCheckResponse.named("outbox-destinations");
      List<String> down = new ArrayList<>();
      DestinationStates states = relay.destinations();
      for (Map.Entry<String, StateChangeLog> e :
          (states == null ? Map.<String, StateChangeLog>of() : states.all()).entrySet()) {
        StateChangeLog.Status st = e.getValue().status();
        if (st.up()) {
          b.withData("destination." + e.getKey(), "UP");
        } else {
          String why =
              "DOWN since "
                  + st.since()
                  + " after "
                  + st.failures()
                  + " failed deliveries: "
                  + st.reason();
          b.withData("destination." + e.getKey(), why);
          down.add("destination '" + e.getKey() + "' " + why);
        }
      }
      return down.isEmpty()
          ? b.up().build()
          : b.down().withData("reason", String.join("; ", down)).build();
    };
  }
}
