package dev.outboxrelay.relay.maintenance;

import dev.outboxrelay.outbox.store.JdbcReconciliationStore;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lifecycle.RelayService;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.interceptor.Interceptor;
import java.net.InetAddress;
import java.util.UUID;
import org.jboss.logging.Logger;

/**
 * Runs {@link RetentionService} every {@code outbox.retention.interval} in this relay (never two
 * ticks at once here; never two passes at once in the fleet, through the lease). Starts after
 * {@link RelayService} (it needs its migrated database) and validates the settings then.
 */
@ApplicationScoped
public class RetentionSchedule {
  private static final Logger LOG = Logger.getLogger(RetentionSchedule.class);

  @Inject RelayConfig config;
  @Inject RelayService relay;
  @Inject MeterRegistry registry;

  private volatile RetentionSettings settings;
  private volatile RetentionService service;

  void onStart(@Observes @Priority(Interceptor.Priority.APPLICATION + 1000) StartupEvent event) {
    RetentionSettings s = RetentionSettings.fromConfig(config);
    String owner = instanceName();
    service = new RetentionService(relay.store(), JdbcReconciliationStore.create(relay.dataSource(), relay.tables()), s,
        new RetentionMetrics(registry), owner);
    settings = s;
    LOG.infof("retention as %s: %s", owner, s.enabled()
        ? "every " + s.interval() + ", keeps sent/confirmed jobs " + s.keep() + ", batches of " + s.batchSize()
            + ", at most " + s.maxPerPass() + " per pass"
        : "disabled (outbox.retention.enabled=false)");
  }

  @Scheduled(identity = "outbox-retention", every = "${outbox.retention.interval:10m}",
      concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
  void onSchedule() {
    RetentionSettings s = settings;
    if (s == null || !s.enabled()) {
      return;
    }
    try {
      service.runScheduled();
    } catch (RuntimeException e) {
      LOG.errorf("scheduled retention failed (the next tick tries again): %s", e.getMessage());
    }
  }

  public RetentionService service() {
    return service;
  }

  private static String instanceName() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      host = "unknown-host";
    }
    return host + "/" + ProcessHandle.current().pid() + "/" + UUID.randomUUID().toString().substring(0, 8);
  }
}
