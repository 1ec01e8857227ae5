package dev.outboxrelay.relay.health;

import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lifecycle.RelayService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;

/** The relay's own checks; the datasource check comes from Quarkus Agroal. */
@ApplicationScoped
public class RelayHealthChecks {
  @Inject RelayService relay;
  @Inject RelayConfig config;

  @Produces
  @Liveness
  HealthCheck claimLoopAlive() {
    return () -> {
      boolean up = !config.relay().enabled()
          || (relay.claimLoop() != null && relay.claimLoop().running());
      return HealthCheckResponse.named("outbox-claim-loop").status(up).build();
    };
  }

  @Produces
  @Readiness
  HealthCheck relayReady() {
    return () -> {
      var b = HealthCheckResponse.named("outbox-relay");
      String claimError = relay.claimLoop() == null ? "not started" : relay.claimLoop().lastError();
      String maintenanceError = relay.maintenanceError();
      b.withData("in_flight", relay.claimLoop() == null ? 0 : relay.claimLoop().inFlight());
      // Informational only: without notifications the claim loop still polls, so no DOWN for it.
      b.withData("listen_notify", relay.readyListenerState());
      if (claimError != null && config.relay().enabled()) {
        return b.down().withData("reason", "claiming fails: " + claimError).build();
      }
      if (maintenanceError != null) {
        return b.down().withData("reason", maintenanceError).build();
      }
      java.time.Duration age = relay.metrics() == null ? java.time.Duration.ZERO : relay.oldestReadyAge();
      java.time.Duration limit = config.relay().readyMaxBacklogAge();
      b.withData("oldest_ready_age_seconds", age.toSeconds());
      if (age.compareTo(limit) > 0) {
        return b.down().withData("reason", "the oldest ready job is " + age.toSeconds() + "s old,"
            + " over outbox.relay.ready-max-backlog-age=" + limit.toSeconds() + "s: the backlog"
            + " is not draining (sink down, relays stuck or too few)").build();
      }
      return b.up().build();
    };
  }
}
