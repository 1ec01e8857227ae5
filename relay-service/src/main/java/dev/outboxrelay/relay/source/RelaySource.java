package dev.outboxrelay.relay.source;

import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.FleetLock;
import dev.outboxrelay.outbox.store.JdbcFleetLock;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.JdbcReconciliationStore;
import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.outbox.store.ReconciliationStore;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.relay.background.Pass;
import dev.outboxrelay.relay.background.ServiceRunner;
import dev.outboxrelay.relay.claim.Backoff;
import dev.outboxrelay.relay.claim.ClaimLoop;
import dev.outboxrelay.relay.claim.IdleWait;
import dev.outboxrelay.relay.claim.ReadyListener;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lease.LeaseReaper;
import dev.outboxrelay.relay.metrics.GaugeRefresh;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.state.StateChangeLog;
import dev.outboxrelay.relay.tracing.DeliveryTracing;
import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * One source at run time: its database state ({@link StateChangeLog}, gauge {@code
 * outbox_source_up{source}}) and, once its database answered, its store (dialect detected), claim
 * loop, lease reaper, gauges and notification listener. {@link #start()} tries once at once; when
 * the database is down it keeps trying in the background with pauses growing to {@code
 * outbox.relay.error-max-wait}, and the source is DOWN meanwhile. Configuration errors (pool too
 * small) are thrown, never retried.
 */
public final class RelaySource {
  private static final Logger LOG = Logger.getLogger(RelaySource.class);
  static final Duration RETRY_MIN = Duration.ofMillis(100);

  /** What every source is wired with. */
  public record Wiring(
      RelayConfig.Relay relay,
      OutboxTables tables,
      MeterRegistry registry,
      SinkRegistry sinks,
      Backoff backoff,
      DeliveryTracing tracing,
      Clock clock) {}

  /** A started source's services, and its stores besides the relay's. */
  private record Running(
      RelayAssembly assembly,
      OutboxAdminStore admin,
      ReconciliationStore reconciliation,
      FleetLock locks) {
    JdbcOutboxStore store() {
      return assembly.store();
    }
  }

  private final SourceSpec spec;
  private final AgroalDataSource dataSource;
  private final Wiring wiring;
  private final StateChangeLog database;

  /** Tries to start until the database answers, then stops. */
  private final ServiceRunner starter;

  private final AtomicReference<Duration> clockSkew = new AtomicReference<>(Duration.ZERO);
  private final List<ServiceRunner> maintenance = new CopyOnWriteArrayList<>();
  private volatile Running running;
  private volatile ReadyListener readyListener;
  private volatile String readyListenerOff;
  private volatile boolean stopped;

  public RelaySource(SourceSpec spec, AgroalDataSource dataSource, Wiring wiring) {
    this.spec = Objects.requireNonNull(spec, "spec");
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.wiring = Objects.requireNonNull(wiring, "wiring");
    this.database =
        new StateChangeLog(
            "source '" + spec.name() + "' (datasource " + spec.datasource() + ")",
            StateChangeLog.Lines.of(LOG),
            wiring.clock(),
            wiring.relay().outageReminderInterval(),
            1);
    Gauge.builder("outbox.source.up", database, StateChangeLog::upValue)
        .tag("source", spec.name())
        .description("1 while the source's database answers, 0 while it is DOWN")
        .register(wiring.registry());
    this.starter =
        new ServiceRunner("outbox-source-" + spec.name(), "cannot start", this::startOnce, database)
            .firstAfter(RETRY_MIN)
            .every(RETRY_MIN)
            .backingOffTo(wiring.relay().errorMaxWait());
  }

  /**
   * Checks the pool against the concurrency (throws naming the keys), then starts now if the
   * database answers, else in the background as soon as it does (pauses from 100ms doubling to
   * {@code outbox.relay.error-max-wait}).
   */
  public void start() {
    int poolMaxSize = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
    PoolSize.check(spec, poolMaxSize);
    try {
      starter.pass();
    } catch (Exception e) {
      starter.start();
    }
  }

  /** One attempt to reach the database and start the services; throws (DOWN) when it failed. */
  private synchronized Pass startOnce() {
    if (stopped || running != null) {
      starter.close();
      return Pass.idle();
    }
    RelayConfig.Relay relay = wiring.relay();
    if (relay.migrateAtStart()) {
      int applied = OutboxSchema.migrate(dataSource, wiring.tables());
      LOG.infof(
          "source '%s': outbox schema on datasource '%s' is current (%d migration(s) applied)",
          spec.name(), spec.datasource(), applied);
    }
    RelayAssembly assembly =
        RelayAssembly.assemble(
            dataSource,
            wiring.tables(),
            wiring.registry(),
            wiring.sinks(),
            relay,
            spec,
            wiring.backoff(),
            new IdleWait(relay.idleMinWait(), relay.idleMaxWait()),
            clockSkew::get,
            wiring.tracing(),
            database);
    JdbcOutboxStore store = assembly.store();
    running =
        new Running(
            assembly,
            new JdbcOutboxAdminStore(dataSource, store.dialect(), wiring.tables()),
            new JdbcReconciliationStore(dataSource, store.dialect(), wiring.tables()),
            new JdbcFleetLock(dataSource, store.dialect(), wiring.tables()));
    starter.close();
    Running r = running;
    maintenance.add(
        new ServiceRunner(
                "outbox-gauges-" + spec.name(),
                "refreshing gauges failed",
                new GaugeRefresh(r.admin(), r.assembly().metrics(), clockSkew::set),
                database)
            .every(relay.metricsRefreshInterval())
            .firstAfter(Duration.ZERO)
            .start());
    if (relay.enabled()) {
      maintenance.add(
          new ServiceRunner(
                  "outbox-reaper-" + spec.name(),
                  "reaping expired leases failed",
                  r.assembly().reaper(),
                  database)
              .every(relay.reapInterval())
              .skipWhileDown()
              .start());
      r.assembly().claimLoop().start();
      ReadyListener listener = r.assembly().readyListener(dataSource, relay).orElse(null);
      int poolMaxSize = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
      if (listener != null && !PoolSize.listenerFits(spec.concurrency(), poolMaxSize)) {
        // Never fail a configuration that worked before: poll, and say how to get the wake-up.
        readyListenerOff =
            "off (the pool has no connection to spare for it: quarkus.datasource."
                + spec.datasource()
                + ".jdbc.max-size="
                + poolMaxSize
                + " needs to be at least "
                + (PoolSize.needed(spec.concurrency()) + 1)
                + "): polling";
        LOG.warnf(
            "source '%s': outbox.relay.listen-notify is on, but the notification listener is %s",
            spec.name(), readyListenerOff);
        listener = null;
      }
      if (listener != null) {
        listener.reportingTo(database).start();
        readyListener = listener;
      }
    }
    LOG.infof(
        "source '%s' %s on datasource '%s' (%s): batch %d, concurrency %d, wake-up %s",
        spec.name(),
        relay.enabled() ? "delivering" : "started with delivery disabled",
        spec.datasource(),
        r.store().dialect().name(),
        spec.batchSize(),
        spec.concurrency(),
        readyListener != null ? "on notification (LISTEN) and polling" : "polling");
    return Pass.done(1);
  }

  /**
   * Stops claiming, lets in-flight deliveries finish within {@code grace}; returns jobs released.
   */
  public int stop(Duration grace) {
    stopped = true;
    ReadyListener listener = readyListener;
    if (listener != null) {
      listener.close();
    }
    int left = 0;
    Running r = running;
    if (r != null) {
      ClaimLoop loop = r.assembly().claimLoop();
      LOG.infof(
          "source '%s' stopping: no new claims; waiting up to %s for %d in-flight deliveries",
          spec.name(), grace, loop.inFlight());
      left = loop.stop(grace);
      LOG.infof("source '%s' stopped (%d job(s) released unfinished)", spec.name(), left);
    }
    starter.close();
    maintenance.forEach(ServiceRunner::close);
    return left;
  }

  public SourceSpec spec() {
    return spec;
  }

  public String name() {
    return spec.name();
  }

  public AgroalDataSource dataSource() {
    return dataSource;
  }

  /** The database's state: UP, or DOWN with the latest error. */
  public StateChangeLog database() {
    return database;
  }

  /** True once the database answered and the services run. */
  public boolean started() {
    return running != null;
  }

  /** The relay's store; throws {@link SourceUnavailableException} until the source started. */
  public JdbcOutboxStore store() {
    return runningOrThrow().store();
  }

  /** The counts, jobs and operator actions of this outbox (same until the source started). */
  public OutboxAdminStore admin() {
    return runningOrThrow().admin();
  }

  /** The reconciliation tables of this database (same until the source started). */
  public ReconciliationStore reconciliation() {
    return runningOrThrow().reconciliation();
  }

  /** The fleet locks of this database (same until the source started). */
  public FleetLock locks() {
    return runningOrThrow().locks();
  }

  /** The claim loop, or null before the source started. */
  public ClaimLoop claimLoop() {
    Running r = running;
    return r == null ? null : r.assembly().claimLoop();
  }

  /** The meters, or null before the source started. */
  public RelayMetrics metrics() {
    Running r = running;
    return r == null ? null : r.assembly().metrics();
  }

  /** The reaper, or null before the source started. */
  public LeaseReaper reaper() {
    Running r = running;
    return r == null ? null : r.assembly().reaper();
  }

  /** The dialect's name, or {@code unknown} before the database answered. */
  public String dialect() {
    Running r = running;
    return r == null ? "unknown" : r.store().dialect().name();
  }

  /** The oldest ready, due job's age at the last gauge refresh (zero before the source started). */
  public Duration oldestReadyAge() {
    Running r = running;
    return r == null ? Duration.ZERO : r.assembly().metrics().oldestReadyAge();
  }

  /**
   * The notification listener's state for readiness details: {@code listening}, {@code
   * reconnecting: <error>} (the loop polls meanwhile), or why there is none.
   */
  public String readyListenerState() {
    RelayConfig.Relay relay = wiring.relay();
    ReadyListener listener = readyListener;
    if (listener != null) {
      return listener.state();
    }
    if (readyListenerOff != null) {
      return readyListenerOff;
    }
    if (!relay.enabled()) {
      return "off (delivery disabled)";
    }
    if (!relay.listenNotify()) {
      return "off (outbox.relay.listen-notify=false): polling";
    }
    Running r = running;
    return r == null
        ? "not started"
        : "off (" + r.store().dialect().name() + " has no notifications): polling";
  }

  private Running runningOrThrow() {
    Running r = running;
    if (r == null) {
      throw new SourceUnavailableException(spec.name(), database.status().reason());
    }
    return r;
  }
}
