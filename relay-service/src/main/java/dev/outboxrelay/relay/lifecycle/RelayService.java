package dev.outboxrelay.relay.lifecycle;

import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.schema.OutboxTables;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.claim.Backoff;
import dev.outboxrelay.relay.claim.ClaimLoop;
import dev.outboxrelay.relay.claim.IdleWait;
import dev.outboxrelay.relay.claim.ReadyListener;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lease.LeaseReaper;
import dev.outboxrelay.relay.lease.LeaseRenewer;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.HttpSink;
import dev.outboxrelay.relay.sink.BrokerChannels;
import dev.outboxrelay.relay.sink.KafkaChannel;
import dev.outboxrelay.relay.sink.RabbitMqChannel;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.tracing.DeliveryTracing;
import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.agroal.runtime.AgroalDataSourceUtil;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/** Owns the relay's services for the life of the process. */
@ApplicationScoped
public class RelayService {
  private static final Logger LOG = Logger.getLogger(RelayService.class);
  /** The named datasources declared in application.properties, one per supported database. */
  static final List<String> OUTBOX_DATASOURCES = List.of("h2", "postgresql", "mariadb", "mssql");

  @Inject RelayConfig config;
  @Inject MeterRegistry registry;
  @Inject KafkaChannel kafkaChannel;
  @Inject RabbitMqChannel rabbitMqChannel;
  /** Quarkus OpenTelemetry's tracer: a no-op one while quarkus.otel.sdk.disabled=true (the default). */
  @Inject Tracer tracer;

  private OutboxStore store;
  private OutboxTables tables;
  private AgroalDataSource dataSource;
  private RelayMetrics metrics;
  private LeaseRenewer renewer;
  private LeaseReaper reaper;
  private ClaimLoop claimLoop;
  private ReadyListener readyListener;
  private volatile String readyListenerOff;
  private ScheduledExecutorService maintenance;
  private final AtomicReference<Duration> clockSkew = new AtomicReference<>(Duration.ZERO);
  private final AtomicReference<String> maintenanceError = new AtomicReference<>();

  void onStart(@Observes StartupEvent event) {
    // First: a hostile outbox.schema / outbox.table fails start-up, naming the key, before any SQL.
    OutboxTables tables = OutboxTables.of(config.schema(), config.table());
    this.tables = tables;
    RelayConfig.Relay relay = config.relay();
    SinkRegistry sinks = SinkRegistry.fromConfig(config.destinations(),
        key -> ConfigProvider.getConfig().getConfigValue(key).getRawValue(),
        new BrokerChannels(kafkaChannel, rabbitMqChannel));
    Backoff backoff = Backoff.fromConfig(relay.backoff());
    IdleWait idle = new IdleWait(relay.idleMinWait(), relay.idleMaxWait());
    if (relay.maxAttempts() < 1) {
      throw new IllegalArgumentException("outbox.relay.max-attempts must be >= 1, was " + relay.maxAttempts());
    }
    String dsName = chooseDataSource(relay);
    AgroalDataSource dataSource = AgroalDataSourceUtil.dataSourceIfActive(dsName).orElseThrow();
    int poolMaxSize = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
    checkPoolSize(relay.concurrency(), poolMaxSize, dsName);
    if (relay.migrateAtStart()) {
      int applied = OutboxSchema.migrate(dataSource, tables);
      LOG.infof("outbox schema on datasource '%s' is current (%d migration(s) applied)", dsName, applied);
    }
    RelayAssembly assembly = RelayAssembly.assemble(dataSource, tables, registry, sinks, relay, backoff,
        idle, clockSkew::get, DeliveryTracing.of(tracer, sinks));
    if (!tables.isDefault()) {
      LOG.infof("outbox tables: %s_message and its siblings (outbox.schema, outbox.table)", tables);
    }
    store = assembly.store();
    this.dataSource = dataSource;
    metrics = assembly.metrics();
    renewer = assembly.renewer();
    reaper = assembly.reaper();
    claimLoop = assembly.claimLoop();
    maintenance = Executors.newScheduledThreadPool(1, r -> {
      Thread t = new Thread(r, "outbox-maintenance");
      t.setDaemon(true);
      return t;
    });
    maintenance.scheduleWithFixedDelay(() -> guarded("refreshing gauges", this::refreshGauges),
        0, relay.metricsRefreshInterval().toMillis(), TimeUnit.MILLISECONDS);
    if (relay.enabled()) {
      maintenance.scheduleWithFixedDelay(() -> guarded("reaping expired leases", reaper::reapOnce),
          relay.reapInterval().toMillis(), relay.reapInterval().toMillis(), TimeUnit.MILLISECONDS);
      claimLoop.start();
      readyListener = assembly.readyListener(dataSource, relay).orElse(null);
      if (readyListener != null && !listenerFits(relay.concurrency(), poolMaxSize)) {
        // Never fail a configuration that worked before: poll, and say how to get the wake-up.
        readyListenerOff = "off (the pool has no connection to spare for it: quarkus.datasource."
            + dsName + ".jdbc.max-size=" + poolMaxSize + " needs to be at least concurrency + "
            + (POOL_HEADROOM + 1) + "): polling";
        LOG.warnf("outbox.relay.listen-notify is on, but the notification listener is %s",
            readyListenerOff);
        readyListener = null;
      }
      if (readyListener != null) {
        readyListener.start();
      }
    }
    LOG.infof("relay %s on datasource '%s' (%s): destinations %s, batch %d, concurrency %d, lease %s,"
            + " max attempts %d, wake-up %s%s", relay.enabled() ? "started" : "started with delivery disabled",
        dsName, ((JdbcOutboxStore) store).dialect().name(), sinks.destinations(), relay.batchSize(),
        relay.concurrency(), relay.leaseDuration(), relay.maxAttempts(),
        readyListener != null ? "on notification (LISTEN) and polling" : "polling", signedNote(sinks));
  }

  /** Which destinations sign (names only: a secret is never logged). */
  private static String signedNote(SinkRegistry sinks) {
    Set<String> signed = new TreeSet<>();
    for (String name : sinks.destinations()) {
      if (sinks.forDestination(name).orElseThrow() instanceof HttpSink h && h.signs()) {
        signed.add(name);
      }
    }
    return signed.isEmpty() ? "" : ", signed " + signed;
  }

  /** Connections besides the workers': claim loop, heartbeats, reaper and gauges. */
  static final int POOL_HEADROOM = 4;

  /**
   * Every worker records its outcome on a connection while heartbeats, the claim loop and the
   * reaper need theirs: a pool smaller than that starves deliveries into acquisition timeouts.
   */
  static void checkPoolSize(int concurrency, int poolMaxSize, String dsName) {
    if (concurrency + POOL_HEADROOM > poolMaxSize) {
      throw new IllegalArgumentException("outbox.relay.concurrency=" + concurrency + " needs at least "
          + (concurrency + POOL_HEADROOM) + " connections, but quarkus.datasource." + dsName
          + ".jdbc.max-size is " + poolMaxSize + ": raise the pool or lower the concurrency");
    }
  }

  /**
   * The PostgreSQL notification listener holds one more connection for good; it runs only when
   * the pool has that one on top of what {@link #checkPoolSize} demands (otherwise the relay polls).
   */
  static boolean listenerFits(int concurrency, int poolMaxSize) {
    return concurrency + POOL_HEADROOM + 1 <= poolMaxSize;
  }

  private static String chooseDataSource(RelayConfig.Relay relay) {
    Set<String> active = new TreeSet<>();
    for (String name : OUTBOX_DATASOURCES) {
      if (AgroalDataSourceUtil.dataSourceIfActive(name).isPresent()) {
        active.add(name);
      }
    }
    if (relay.datasource().isPresent()) {
      String name = relay.datasource().get();
      if (!active.contains(name)) {
        throw new IllegalArgumentException("outbox.relay.datasource='" + name + "' is not an active"
            + " datasource (set quarkus.datasource." + name + ".jdbc.url); active: " + active);
      }
      return name;
    }
    if (active.size() != 1) {
      throw new IllegalArgumentException(active.isEmpty()
          ? "no outbox database configured: set the jdbc.url of one of the datasources "
              + OUTBOX_DATASOURCES + " (e.g. quarkus.datasource.postgresql.jdbc.url)"
          : "several datasources are active " + active + ": choose one with outbox.relay.datasource");
    }
    return active.iterator().next();
  }

  private void refreshGauges() {
    metrics.messagesByState(store.countByState());
    metrics.oldestReadyAge(store.oldestReadyAge().orElse(Duration.ZERO));
    Instant before = Instant.now();
    Instant db = store.databaseNow();
    clockSkew.set(Duration.between(before, db));
  }

  private void guarded(String what, Runnable task) {
    try {
      task.run();
      if (maintenanceError.getAndSet(null) != null) {
        LOG.infof("%s works again", what);
      }
    } catch (RuntimeException e) {
      if (maintenanceError.getAndSet(what + ": " + e.getMessage()) == null) {
        LOG.errorf("%s failed (logged again when it recovers): %s", what, e.getMessage());
      }
    }
  }

  void onStop(@Observes ShutdownEvent event) {
    if (readyListener != null) {
      readyListener.close();
    }
    if (claimLoop != null) {
      Duration grace = config.relay().shutdownGrace();
      LOG.infof("stopping: no new claims; waiting up to %s for %d in-flight deliveries", grace,
          claimLoop.inFlight());
      int left = claimLoop.stop(grace);
      LOG.infof("stopped (%d job(s) released unfinished)", left);
    }
    if (maintenance != null) {
      maintenance.shutdownNow();
    }
    if (renewer != null) {
      renewer.close();
    }
  }

  public OutboxStore store() {
    return store;
  }

  /** The outbox database chosen at start-up (for services that keep their own store on it). */
  public AgroalDataSource dataSource() {
    return dataSource;
  }

  /** The validated names of the outbox tables ({@code outbox.schema}, {@code outbox.table}). */
  public OutboxTables tables() {
    return tables;
  }

  public ClaimLoop claimLoop() {
    return claimLoop;
  }

  /**
   * The notification listener's state for readiness details: {@code listening}, {@code
   * reconnecting: <error>} (the loop polls meanwhile), or why there is none.
   */
  public String readyListenerState() {
    if (readyListener != null) {
      return readyListener.state();
    }
    if (readyListenerOff != null) {
      return readyListenerOff;
    }
    if (!config.relay().enabled()) {
      return "off (delivery disabled)";
    }
    if (!config.relay().listenNotify()) {
      return "off (outbox.relay.listen-notify=false): polling";
    }
    return store == null ? "not started" : "off (" + ((JdbcOutboxStore) store).dialect().name()
        + " has no notifications): polling";
  }

  public LeaseReaper reaper() {
    return reaper;
  }

  /** The oldest ready, due job's age at the last gauge refresh. */
  public Duration oldestReadyAge() {
    return metrics.oldestReadyAge();
  }

  public RelayMetrics metrics() {
    return metrics;
  }

  /** The last database error of a background task, or null. */
  public String maintenanceError() {
    return maintenanceError.get();
  }
}
