package dev.outboxrelay.relay.bench;

import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.relay.background.ServiceRunner;
import dev.outboxrelay.relay.claim.Backoff;
import dev.outboxrelay.relay.claim.IdleWait;
import dev.outboxrelay.relay.claim.ReadyListener;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.metrics.GaugeRefresh;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.source.RelayAssembly;
import dev.outboxrelay.relay.state.StateChangeLog;
import io.agroal.api.AgroalDataSource;
import io.agroal.api.AgroalDataSourceMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * A relay in this process, wired by {@link RelayAssembly} like {@code RelayService}, with the
 * defaults of {@link RelayConfig} (read from the real mapping, so they cannot drift; a system
 * property such as {@code -Doutbox.relay.batch-size=64} overrides one), a pooled Agroal datasource
 * of the relay's size and the {@link RecordingSink}. Runs the claim loop, the reaper and the gauge
 * refresh on their configured intervals, as the service does.
 */
final class InProcessRelay implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(InProcessRelay.class);
  private final AgroalDataSource dataSource;
  private final RelayAssembly assembly;

  /** The reaper and the gauge refresh, on their runners as RelaySource runs them. */
  private final List<ServiceRunner> maintenance = new ArrayList<>();

  private final RelayConfig.Relay config;

  /** The LISTEN/NOTIFY wake-up, as RelayService runs it (PostgreSQL with listen-notify on). */
  private final ReadyListener readyListener;

  InProcessRelay(String url, String user, dev.outboxrelay.relay.sink.MessageSink sink)
      throws SQLException {
    this.config = config().relay();
    this.dataSource = BenchDatabase.pool(url, user, BenchDatabase.RELAY_POOL_MAX_SIZE);
    this.assembly =
        RelayAssembly.assemble(
            dataSource,
            new SimpleMeterRegistry(),
            new SinkRegistry(Map.of(BenchDatabase.DESTINATION, sink)),
            config,
            Backoff.fromConfig(config.backoff()),
            new IdleWait(config.idleMinWait(), config.idleMaxWait()),
            () -> Duration.ZERO);
    this.readyListener = assembly.readyListener(dataSource, config).orElse(null);
  }

  /**
   * The relay's configuration: RelayConfig's defaults, overridden by {@code outbox.*} system
   * properties.
   */
  static RelayConfig config() {
    // Durations as Quarkus writes them ("30s", "10ms"), as in application.properties.
    // The test databases' own properties (-Doutbox.test.pg.url) are not relay settings.
    // Default interceptors: defaults such as "${rabbitmq-port:5672}" are expressions.
    SmallRyeConfig c =
        new SmallRyeConfigBuilder()
            .withMapping(RelayConfig.class)
            .addSystemSources()
            .addDefaultInterceptors()
            .withMappingIgnore("outbox.test.**")
            .withConverter(Duration.class, 200, new DurationConverter())
            .build();
    return c.getConfigMapping(RelayConfig.class);
  }

  /** Starts claiming, reaping and refreshing gauges (the maintenance of RelaySource). */
  void start() {
    StateChangeLog database = StateChangeLog.logging("bench relay database", LOG);
    maintenance.add(
        new ServiceRunner(
                "outbox-gauges",
                "refreshing gauges failed",
                new GaugeRefresh(
                    new JdbcOutboxAdminStore(dataSource, assembly.store().dialect()),
                    assembly.metrics(),
                    skew -> {}),
                database)
            .every(config.metricsRefreshInterval())
            .start());
    maintenance.add(
        new ServiceRunner(
                "outbox-reaper", "reaping expired leases failed", assembly.reaper(), database)
            .every(config.reapInterval())
            .skipWhileDown()
            .start());
    assembly.claimLoop().start();
    if (readyListener != null) {
      readyListener.start();
    }
  }

  int claimStatements() {
    return assembly.claimLoop().claimStatements();
  }

  RelayConfig.Relay settings() {
    return config;
  }

  AgroalDataSourceMetrics poolMetrics() {
    return dataSource.getMetrics();
  }

  double staleCompletions() {
    return assembly.metrics().staleCompletionCount();
  }

  /** Stops like RelayService on shutdown; returns the jobs released unfinished. */
  int stop() {
    if (readyListener != null) {
      readyListener.close();
    }
    int left = assembly.claimLoop().stop(config.shutdownGrace());
    maintenance.forEach(ServiceRunner::close);
    return left;
  }

  @Override
  public void close() {
    dataSource.close();
  }
}
