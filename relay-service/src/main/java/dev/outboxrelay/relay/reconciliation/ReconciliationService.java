package dev.outboxrelay.relay.reconciliation;

import static dev.outboxrelay.outbox.store.ReconciliationStore.RECONCILIATION_LOCK;

import dev.outboxrelay.outbox.store.JdbcReconciliationStore;
import dev.outboxrelay.outbox.store.LockHolder;
import dev.outboxrelay.outbox.store.ReconciliationRun;
import dev.outboxrelay.outbox.store.ReconciliationStore;
import dev.outboxrelay.outbox.store.RunStart;
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
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * Runs reconciliation on the schedule and on demand, one run at a time across the fleet through
 * the {@code reconciliation} lease in {@code outbox_lock}, and keeps the metrics current. Starts
 * after {@link RelayService} (it needs its migrated database) and validates its settings then.
 */
@ApplicationScoped
public class ReconciliationService {
  private static final Logger LOG = Logger.getLogger(ReconciliationService.class);
  public static final String SCHEDULE = "schedule";
  public static final String OPERATOR = "operator";

  @Inject RelayConfig config;
  @Inject RelayService relay;
  @Inject MeterRegistry registry;

  /** This relay instance, as the lock owner and the runs' owner. */
  private final String owner = instanceName();
  private volatile ReconciliationSettings settings;
  private volatile ReconciliationStore store;
  private volatile ReconciliationJob job;
  private volatile ReconciliationMetrics metrics;
  private final AtomicReference<String> refreshError = new AtomicReference<>();

  void onStart(@Observes @Priority(Interceptor.Priority.APPLICATION + 1000) StartupEvent event) {
    ReconciliationSettings s = ReconciliationSettings.fromConfig(config);
    ReconciliationStore st = JdbcReconciliationStore.create(relay.dataSource(), relay.tables());
    Map<String, ConfirmationSource> sources = new LinkedHashMap<>();
    for (ReconciliationSettings.DestinationSettings d : s.destinations()) {
      sources.put(d.name(), d.sourceType().equals(ReconciliationSettings.HTTP_LEDGER)
          ? new HttpLedgerSource(d.name(), d.ledgerUrl().orElseThrow(), d.connectTimeout(), d.requestTimeout(), st)
          : new TableConfirmationSource());
    }
    metrics = new ReconciliationMetrics(registry);
    store = st;
    job = new ReconciliationJob(st, s, sources);
    settings = s;
    LOG.infof("reconciliation as %s: %s, window %s, grace period %s, lease %s; destinations %s", owner,
        s.enabled() ? "scheduled every " + s.interval() : "on demand only", s.window(), s.gracePeriod(),
        s.lease(), s.destinations().isEmpty() ? "none (set outbox.destinations.<name>.confirmation.type)"
            : s.destinations().stream().map(d -> d.name() + " (" + d.sourceType()
                + (d.redriveUnconfirmed() ? ", re-drive" : "") + (d.acceptConfirmedNotSent() ? ", accept" : "")
                + ")").toList());
  }

  /** The schedule's tick: runs the current window unless it is disabled, done or held elsewhere. */
  @Scheduled(identity = "outbox-reconciliation", every = "${outbox.reconciliation.interval:5m}",
      concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
  void onSchedule() {
    ReconciliationSettings s = settings;
    if (s == null || !s.enabled() || s.destinations().isEmpty()) {
      return;
    }
    try {
      runScheduled();
    } catch (RuntimeException e) {
      LOG.errorf("scheduled reconciliation failed (the next tick tries again): %s", e.getMessage());
    }
  }

  /** Keeps every relay's gauges on the fleet's latest run. */
  @Scheduled(identity = "outbox-reconciliation-metrics", every = "${outbox.relay.metrics-refresh-interval:5s}",
      concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
  void refreshMetrics() {
    if (store == null) {
      return;
    }
    try {
      store.latestSuccessfulRun().ifPresent(e -> metrics.latestRun(e.getKey(), e.getValue()));
      if (refreshError.getAndSet(null) != null) {
        LOG.info("reading the latest reconciliation run works again");
      }
    } catch (RuntimeException e) {
      if (refreshError.getAndSet(e.getMessage()) == null) {
        LOG.errorf("reading the latest reconciliation run failed (logged again when it recovers): %s",
            e.getMessage());
      }
    }
  }

  /**
   * One scheduled pass: the window ending on the latest multiple of the interval (database clock),
   * unless that window was reconciled already or another relay holds the lease. Empty when skipped.
   */
  public Optional<ReconciliationRun> runScheduled() {
    ReconciliationSettings s = settings;
    if (!store.acquireLock(RECONCILIATION_LOCK, owner, s.lease())) {
      LOG.debugf("scheduled reconciliation skipped: another relay holds the lease");
      return Optional.empty();
    }
    try {
      Instant slot = slotEnd(store.databaseNow(), s.interval());
      if (store.scheduleSlotTaken(slot)) {
        return Optional.empty();
      }
      return runLocked(new RunStart(slot.minus(s.window()), slot, SCHEDULE, owner, slot));
    } finally {
      store.releaseLock(RECONCILIATION_LOCK, owner);
    }
  }

  /**
   * A run on demand over {@code [start, end)}; either may be null (end: database now; start: end
   * minus the window). Throws {@link ReconciliationBusyException} while another relay runs one.
   */
  public ReconciliationRun runOnDemand(Instant start, Instant end) {
    ReconciliationSettings s = settings;
    Instant windowEnd = end != null ? end : store.databaseNow();
    Instant windowStart = start != null ? start : windowEnd.minus(s.window());
    if (!windowEnd.isAfter(windowStart)) {
      // Only a window_start without window_end gets here (both given are checked when parsed).
      throw dev.outboxrelay.relay.web.ProblemException.badRequest("window_start", "window_start (" + start
          + ") must be before now (" + windowEnd + ") when window_end is not given");
    }
    RunStart runStart = new RunStart(windowStart, windowEnd, OPERATOR, owner, null);
    if (!store.acquireLock(RECONCILIATION_LOCK, owner, s.lease())) {
      LockHolder holder = store.lockHolder(RECONCILIATION_LOCK).orElse(null);
      throw holder == null ? new ReconciliationBusyException("another relay", null)
          : new ReconciliationBusyException(holder.owner(), holder.leaseUntil());
    }
    try {
      return runLocked(runStart).orElseThrow(() -> new IllegalStateException("an on-demand run was refused"));
    } finally {
      store.releaseLock(RECONCILIATION_LOCK, owner);
    }
  }

  private Optional<ReconciliationRun> runLocked(RunStart start) {
    Optional<ReconciliationRun> run = job.reconcileOnce(start,
        () -> store.renewLock(RECONCILIATION_LOCK, owner, settings.lease()));
    run.filter(r -> r.error() == null).ifPresent(r -> metrics.latestRun(r, Duration.between(r.finishedAt(),
        store.databaseNow())));
    return run;
  }

  /** The end of the latest whole interval at {@code now}: windows tile time the same on every relay. */
  static Instant slotEnd(Instant now, Duration interval) {
    long step = interval.toMillis();
    return Instant.ofEpochMilli(Math.floorDiv(now.toEpochMilli(), step) * step);
  }

  public Optional<ReconciliationRun> findRun(long id) {
    return store.findRun(id);
  }

  public Optional<ReconciliationRun> latestRun() {
    return store.latestFinishedRun();
  }

  /** Up to {@code limit} finished runs, newest first, without items. */
  public java.util.List<ReconciliationRun> recentRuns(int limit) {
    return store.recentRuns(limit);
  }

  public ReconciliationSettings settings() {
    return settings;
  }

  public ReconciliationMetrics metrics() {
    return metrics;
  }

  public String owner() {
    return owner;
  }

  private static String instanceName() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      host = "unknown-host";
    }
    String pid = String.valueOf(ProcessHandle.current().pid());
    return host + "/" + pid + "/" + UUID.randomUUID().toString().substring(0, 8);
  }
}
