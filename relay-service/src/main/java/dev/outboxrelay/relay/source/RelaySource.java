package dev.outboxrelay.relay.source;

import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.schema.OutboxTables;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.JdbcReconciliationStore;
import dev.outboxrelay.outbox.store.ReconciliationStore;
import dev.outboxrelay.relay.claim.Backoff;
import dev.outboxrelay.relay.claim.ClaimLoop;
import dev.outboxrelay.relay.claim.IdleWait;
import dev.outboxrelay.relay.claim.ReadyListener;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.health.StateChangeLog;
import dev.outboxrelay.relay.lifecycle.RelayAssembly;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.tracing.DeliveryTracing;
import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * One source at run time: its database state ({@link StateChangeLog}, gauge {@code
 * outbox_source_up{source}}) and, once its database answered, its store (dialect detected),
 * claim loop, lease reaper, gauges and notification listener. {@link #start()} tries once at
 * once; when the database is down it keeps trying in the background with pauses growing to
 * {@code outbox.relay.error-max-wait}, and the source is DOWN meanwhile. Configuration errors (pool
 * too small) are thrown, never retried.
 */
public final class RelaySource {
  private static final Logger LOG = Logger.getLogger(RelaySource.class);
  static final Duration RETRY_MIN = Duration.ofMillis(100);

  /** What every source is wired with. */
  public record Wiring(RelayConfig.Relay relay, OutboxTables tables, MeterRegistry registry, SinkRegistry sinks, Backoff backoff,
      DeliveryTracing tracing, Clock clock) {}

  /** A started source's services. */
  private record Running(RelayAssembly assembly, ReconciliationStore locks) {
    JdbcOutboxStore store() {
      return assembly.store();
    }
  }

  private final SourceSpec spec;
  private final AgroalDataSource dataSource;
  private final Wiring wiring;
  private final StateChangeLog database;
  private final ScheduledExecutorService maintenance;
  private final AtomicReference<Duration> clockSkew = new AtomicReference<>(Duration.ZERO);
  private volatile Running running;
  private volatile ReadyListener readyListener;
  private volatile String readyListenerOff;
  private volatile boolean stopped;
  private Duration retryPause = RETRY_MIN;

  public RelaySource(SourceSpec spec, AgroalDataSource dataSource, Wiring wiring) {
    this.spec = Objects.requireNonNull(spec, "spec");
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.wiring = Objects.requireNonNull(wiring, "wiring");
    this.database = new StateChangeLog("source '" + spec.name() + "' (datasource " + spec.datasource() + ")",
        StateChangeLog.Lines.of(LOG), wiring.clock(), wiring.relay().outageReminderInterval(), 1);
    Gauge.builder("outbox.source.up", database, StateChangeLog::upValue).tag("source", spec.name())
        .description("1 while the source's database answers, 0 while it is DOWN").register(wiring.registry());
    this.maintenance = Executors.newScheduledThreadPool(1, r -> {
      Thread t = new Thread(r, "outbox-source-" + spec.name());
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Checks the pool against the concurrency (throws naming the keys), then starts now if the
   * database answers, else in the background as soon as it does.
   */
  public void start() {
    int poolMaxSize = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
    PoolSize.check(spec, poolMaxSize);
    if (!tryStart()) {
      scheduleRetry();
    }
  }

  private void scheduleRetry() {
    if (stopped) {
      return;
    }
    Duration pause = retryPause;
    Duration max = wiring.relay().errorMaxWait();
    retryPause = Backoff.doubled(pause, max);
    maintenance.schedule(() -> {
      if (!tryStart()) {
        scheduleRetry();
      }
    }, pause.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** One attempt to reach the database and start the services; false (and DOWN) when it failed. */
  private synchronized boolean tryStart() {
    if (stopped || running != null) {
      return true;
    }
    RelayConfig.Relay relay = wiring.relay();
    try {
      if (relay.migrateAtStart()) {
        int applied = OutboxSchema.migrate(dataSource, wiring.tables());
        LOG.infof("source '%s': outbox schema on datasource '%s' is current (%d migration(s) applied)",
            spec.name(), spec.datasource(), applied);
      }
      RelayAssembly assembly = RelayAssembly.assemble(dataSource, wiring.tables(), wiring.registry(), wiring.sinks(), relay, spec,
          wiring.backoff(), new IdleWait(relay.idleMinWait(), relay.idleMaxWait()), clockSkew::get,
          wiring.tracing(), database);
      running = new Running(assembly, JdbcReconciliationStore.create(dataSource, wiring.tables()));
    } catch (RuntimeException e) {
      database.failure("cannot start: " + StateChangeLog.describe(e));
      return false;
    }
    database.success();
    Running r = running;
    maintenance.scheduleWithFixedDelay(() -> guarded(this::refreshGauges), 0,
        relay.metricsRefreshInterval().toMillis(), TimeUnit.MILLISECONDS);
    if (relay.enabled()) {
      maintenance.scheduleWithFixedDelay(() -> guarded(r.assembly().reaper()::reapOnce),
          relay.reapInterval().toMillis(), relay.reapInterval().toMillis(), TimeUnit.MILLISECONDS);
      r.assembly().claimLoop().start();
      ReadyListener listener = r.assembly().readyListener(dataSource, relay).orElse(null);
      int poolMaxSize = dataSource.getConfiguration().connectionPoolConfiguration().maxSize();
      if (listener != null && !PoolSize.listenerFits(spec.concurrency(), poolMaxSize)) {
        // Never fail a configuration that worked before: poll, and say how to get the wake-up.
        readyListenerOff = "off (the pool has no connection to spare for it: quarkus.datasource."
            + spec.datasource() + ".jdbc.max-size=" + poolMaxSize + " needs to be at least concurrency + "
            + (PoolSize.HEADROOM + 1) + "): polling";
        LOG.warnf("source '%s': outbox.relay.listen-notify is on, but the notification listener is %s",
            spec.name(), readyListenerOff);
        listener = null;
      }
      if (listener != null) {
        listener.reportingTo(database).start();
        readyListener = listener;
      }
    }
    LOG.infof("source '%s' %s on datasource '%s' (%s): batch %d, concurrency %d, wake-up %s", spec.name(),
        relay.enabled() ? "delivering" : "started with delivery disabled", spec.datasource(),
        r.store().dialect().name(), spec.batchSize(), spec.concurrency(),
        readyListener != null ? "on notification (LISTEN) and polling" : "polling");
    return true;
  }

  private void refreshGauges() {
    Running r = running;
    RelayMetrics metrics = r.assembly().metrics();
    metrics.messagesByState(r.store().countByState());
    metrics.oldestReadyAge(r.store().oldestReadyAge().orElse(Duration.ZERO));
    metrics.destinationBacklog(r.store().backlogByDestination());
    Instant before = Instant.now();
    Instant db = r.store().databaseNow();
    clockSkew.set(Duration.between(before, db));
  }

  private void guarded(Runnable task) {
    try {
      Instant callStarted = database.now();
      task.run();
      database.success(callStarted);
    } catch (RuntimeException e) {
      database.failure(StateChangeLog.describe(e));
    }
  }

  /** Stops claiming, lets in-flight deliveries finish within {@code grace}; returns jobs released. */
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
      LOG.infof("source '%s' stopping: no new claims; waiting up to %s for %d in-flight deliveries",
          spec.name(), grace, loop.inFlight());
      left = loop.stop(grace);
      LOG.infof("source '%s' stopped (%d job(s) released unfinished)", spec.name(), left);
    }
    maintenance.shutdownNow();
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

  /** The store; throws {@link SourceUnavailableException} until the source started. */
  public JdbcOutboxStore store() {
    return runningOrThrow().store();
  }

  /** The fleet locks and reconciliation tables of this database (same until the source started). */
  public ReconciliationStore locks() {
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
  public dev.outboxrelay.relay.lease.LeaseReaper reaper() {
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
    return r == null ? "not started" : "off (" + r.store().dialect().name() + " has no notifications): polling";
  }

  private Running runningOrThrow() {
    Running r = running;
    if (r == null) {
      throw new SourceUnavailableException(spec.name(), database.status().reason());
    }
    return r;
  }
}
