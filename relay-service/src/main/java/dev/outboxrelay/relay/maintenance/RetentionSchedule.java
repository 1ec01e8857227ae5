package dev.outboxrelay.relay.maintenance;

import dev.outboxrelay.relay.background.ServiceRunner;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.source.RelayInstance;
import dev.outboxrelay.relay.source.RelaySource;
import dev.outboxrelay.relay.source.SourceSchedule;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.interceptor.Interceptor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Runs {@link RetentionService} every {@code outbox.retention.interval} in this relay, on every
 * source whose database answers: a {@link SourceSchedule}, one runner per source, skipping while
 * the source is DOWN and reporting failures to its state (never two passes at once on one database,
 * through its lease). Starts after {@link RelayService} and validates the settings then; a source's
 * service is made when its database first answers.
 */
@ApplicationScoped
public class RetentionSchedule {
  private static final Logger LOG = Logger.getLogger(RetentionSchedule.class);

  @Inject RelayConfig config;
  @Inject RelayService relay;
  @Inject MeterRegistry registry;

  private final String owner = RelayInstance.newName();
  private volatile RetentionSettings settings;
  private final Map<String, RetentionService> services = new ConcurrentHashMap<>();
  private final SourceSchedule schedule = new SourceSchedule();

  void onStart(@Observes @Priority(Interceptor.Priority.APPLICATION + 1000) StartupEvent event) {
    RetentionSettings s = RetentionSettings.fromConfig(config);
    settings = s;
    for (RelaySource source : relay.sources()) {
      if (source.started()) {
        service(source);
      }
    }
    if (s.enabled()) {
      schedule.start(
          relay.sources(), "outbox-retention-", "retention failed", s.interval(), this::pass);
    }
    LOG.infof(
        "retention as %s: %s",
        owner,
        s.enabled()
            ? "every "
                + s.interval()
                + ", keeps sent/confirmed jobs "
                + s.keep()
                + ", batches of "
                + s.batchSize()
                + ", at most "
                + s.maxPerPass()
                + " per pass"
            : "disabled (outbox.retention.enabled=false)");
  }

  void onStop(@Observes ShutdownEvent event) {
    schedule.close();
  }

  /**
   * One scheduled pass on the started {@code source} ({@link RetentionService#runScheduled()}): the
   * jobs deleted.
   */
  private long pass(RelaySource source) {
    return service(source).runScheduled().map(RetentionService.RetentionPass::deleted).orElse(0L);
  }

  /** The runners of the schedule, one per source (none while retention is disabled). */
  public List<ServiceRunner> runners() {
    return schedule.runners();
  }

  /** The retention service of the first source (the only one on a single-database relay). */
  public RetentionService service() {
    return service(relay.source(null));
  }

  /** The retention service of {@code source}; throws while its database has not answered yet. */
  public RetentionService service(RelaySource source) {
    return services.computeIfAbsent(
        source.name(),
        n ->
            new RetentionService(
                source.store(),
                source.locks(),
                settings,
                new RetentionMetrics(registry, n),
                owner));
  }
}
