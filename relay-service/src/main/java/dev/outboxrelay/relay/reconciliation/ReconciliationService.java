package dev.outboxrelay.relay.reconciliation;

import static dev.outboxrelay.outbox.store.ReconciliationStore.RECONCILIATION_LOCK;

import dev.outboxrelay.outbox.store.FleetLock;
import dev.outboxrelay.outbox.store.LockHolder;
import dev.outboxrelay.outbox.store.ReconciliationRun;
import dev.outboxrelay.outbox.store.ReconciliationStore;
import dev.outboxrelay.outbox.store.RunStart;
import dev.outboxrelay.relay.background.ServiceRunner;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.source.RelayInstance;
import dev.outboxrelay.relay.source.RelaySource;
import dev.outboxrelay.relay.source.SourceSchedule;
import dev.outboxrelay.relay.web.ProblemException;
import dev.outboxrelay.relay.web.RequestInput;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.interceptor.Interceptor;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Runs reconciliation on the schedule and on demand, per source (each database has its own runs),
 * one run at a time across the fleet through the {@code reconciliation} lease in that database's
 * {@code outbox_lock}, and keeps the metrics ({@code source=<name>}) current. Starts after {@link
 * RelayService} (it needs its migrated database) and validates its settings then.
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
  private final String owner = RelayInstance.newName();

  private volatile ReconciliationSettings settings;

  /** Per source: made when its database first answers. */
  private final Map<String, PerSource> perSource = new ConcurrentHashMap<>();

  private final SourceSchedule schedule = new SourceSchedule();

  /** One source's reconciliation: its tables and lease, its job, its meters. */
  private record PerSource(
      RelaySource source,
      ReconciliationStore store,
      FleetLock locks,
      ReconciliationJob job,
      ReconciliationMetrics metrics) {}

  void onStart(@Observes @Priority(Interceptor.Priority.APPLICATION + 1000) StartupEvent event) {
    ReconciliationSettings s = ReconciliationSettings.fromConfig(config);
    settings = s;
    for (RelaySource source : relay.sources()) {
      if (source.started()) {
        of(source);
      }
    }
    schedule.start(
        relay.sources(),
        "outbox-reconciliation-metrics-",
        "reading the latest reconciliation run failed",
        config.relay().metricsRefreshInterval(),
        this::metricsPass);
    if (scheduled(s)) {
      schedule.start(
          relay.sources(),
          "outbox-reconciliation-",
          "scheduled reconciliation failed",
          s.interval(),
          this::scheduledPass);
    }
    LOG.infof(
        "reconciliation as %s: %s, window %s, grace period %s, lease %s; destinations %s",
        owner,
        s.enabled() ? "scheduled every " + s.interval() : "on demand only",
        s.window(),
        s.gracePeriod(),
        s.lease(),
        s.destinations().isEmpty()
            ? "none (set outbox.destinations.<name>.confirmation.type)"
            : s.destinations().stream()
                .map(
                    d ->
                        d.name()
                            + " ("
                            + d.sourceType()
                            + (d.redriveUnconfirmed() ? ", re-drive" : "")
                            + (d.acceptConfirmedNotSent() ? ", accept" : "")
                            + ")")
                .toList());
  }

  /** {@code source}'s reconciliation; throws while its database has not answered since start-up. */
  private PerSource of(RelaySource source) {
    return perSource.computeIfAbsent(
        source.name(),
        name -> {
          ReconciliationStore st = source.reconciliation();
          Map<String, ConfirmationSource> sources = new LinkedHashMap<>();
          for (ReconciliationSettings.DestinationSettings d : settings.destinations()) {
            sources.put(
                d.name(),
                d.sourceType().equals(ReconciliationSettings.HTTP_LEDGER)
                    ? new HttpLedgerSource(
                        d.name(),
                        d.ledgerUrl().orElseThrow(),
                        d.connectTimeout(),
                        d.requestTimeout(),
                        st)
                    : new TableConfirmationSource());
          }
          return new PerSource(
              source,
              st,
              source.locks(),
              new ReconciliationJob(st, settings, sources),
              new ReconciliationMetrics(registry, name, scheduled(settings)));
        });
  }

  /** The source named {@code name} (the first when null); 400 for an unknown name. */
  private PerSource of(String name) {
    return of(relay.source(name));
  }

  /** Whether the schedule runs anything: enabled, with a destination to reconcile. */
  private static boolean scheduled(ReconciliationSettings s) {
    return s != null && s.enabled() && !s.destinations().isEmpty();
  }

  void onStop(@Observes ShutdownEvent event) {
    schedule.close();
  }

  /**
   * The scheduled runs of the started {@code source}: the runs made (0 when the window was done).
   */
  private long scheduledPass(RelaySource source) {
    return runScheduled(of(source)).isPresent() ? 1 : 0;
  }

  /**
   * Keeps every relay's gauges on the fleet's latest run. A failure counts against the source's
   * database state (logged once per change), not a line per pass.
   */
  private long metricsPass(RelaySource source) {
    PerSource p = of(source);
    p.store().latestSuccessfulRun().ifPresent(e -> p.metrics().latestRun(e.getKey(), e.getValue()));
    return 0;
  }

  /** The runners: per source, the metrics refresh and (when scheduled) the runs. */
  public List<ServiceRunner> runners() {
    return schedule.runners();
  }

  /** One scheduled pass on the first source (see {@link #runScheduled(String)}). */
  public Optional<ReconciliationRun> runScheduled() {
    return runScheduled((String) null);
  }

  /**
   * One scheduled pass on {@code source} (the first when null): the window ending on the latest
   * multiple of the interval (database clock), unless that window was reconciled already or another
   * relay holds the lease. Empty when skipped.
   */
  public Optional<ReconciliationRun> runScheduled(String source) {
    return runScheduled(of(source));
  }

  private Optional<ReconciliationRun> runScheduled(PerSource p) {
    ReconciliationSettings s = settings;
    ReconciliationStore store = p.store();
    FleetLock locks = p.locks();
    if (!locks.acquire(RECONCILIATION_LOCK, owner, s.lease())) {
      LOG.debugf(
          "scheduled reconciliation on source '%s' skipped: another relay holds the lease",
          p.source().name());
      return Optional.empty();
    }
    try {
      Instant slot = slotEnd(store.databaseNow(), s.interval());
      if (store.scheduleSlotTaken(slot)) {
        return Optional.empty();
      }
      return runLocked(p, new RunStart(slot.minus(s.window()), slot, SCHEDULE, owner, slot));
    } finally {
      locks.release(RECONCILIATION_LOCK, owner);
    }
  }

  /** {@link #runOnDemand(String, Instant, Instant)} on the first source. */
  public ReconciliationRun runOnDemand(Instant start, Instant end) {
    return runOnDemand(null, start, end);
  }

  /**
   * A run on demand on {@code source} (the first when null) over {@code [start, end)}; either may
   * be null (end: database now; start: end minus the window). Throws {@link
   * ReconciliationBusyException} while another relay runs one on that database.
   */
  public ReconciliationRun runOnDemand(String source, Instant start, Instant end) {
    ReconciliationSettings s = settings;
    PerSource p = of(source);
    ReconciliationStore store = p.store();
    Instant windowEnd = end != null ? end : store.databaseNow();
    Instant windowStart = start != null ? start : windowEnd.minus(s.window());
    if (start == null && windowStart.isBefore(RequestInput.EARLIEST)) {
      // Only a window_end near the earliest instant gets here (each given one is checked when
      // parsed).
      throw ProblemException.badRequest(
          "window_end",
          "window_end ("
              + end
              + ") minus outbox.reconciliation.window ("
              + s.window()
              + ") is before "
              + RequestInput.EARLIEST
              + ", the earliest instant accepted: give window_start");
    }
    if (!windowEnd.isAfter(windowStart)) {
      // Only a window_start without window_end gets here (both given are checked when parsed).
      throw ProblemException.badRequest(
          "window_start",
          "window_start ("
              + start
              + ") must be before now ("
              + windowEnd
              + ") when window_end is not given");
    }
    RunStart runStart = new RunStart(windowStart, windowEnd, OPERATOR, owner, null);
    FleetLock locks = p.locks();
    if (!locks.acquire(RECONCILIATION_LOCK, owner, s.lease())) {
      LockHolder holder = locks.holder(RECONCILIATION_LOCK).orElse(null);
      throw holder == null
          ? new ReconciliationBusyException("another relay", null)
          : new ReconciliationBusyException(holder.owner(), holder.leaseUntil());
    }
    try {
      return runLocked(p, runStart)
          .orElseThrow(() -> new IllegalStateException("an on-demand run was refused"));
    } finally {
      locks.release(RECONCILIATION_LOCK, owner);
    }
  }

  private Optional<ReconciliationRun> runLocked(PerSource p, RunStart start) {
    ReconciliationStore store = p.store();
    Optional<ReconciliationRun> run =
        p.job()
            .reconcileOnce(
                start, () -> p.locks().renew(RECONCILIATION_LOCK, owner, settings.lease()));
    run.filter(r -> r.error() == null)
        .ifPresent(
            r -> p.metrics().latestRun(r, Duration.between(r.finishedAt(), store.databaseNow())));
    return run;
  }

  /**
   * The end of the latest whole interval at {@code now}: windows tile time the same on every relay.
   */
  static Instant slotEnd(Instant now, Duration interval) {
    long step = interval.toMillis();
    return Instant.ofEpochMilli(Math.floorDiv(now.toEpochMilli(), step) * step);
  }

  public Optional<ReconciliationRun> findRun(long id) {
    return findRun(null, id);
  }

  /** Run {@code id} in the tables of {@code source} (the first when null). */
  public Optional<ReconciliationRun> findRun(String source, long id) {
    return of(source).store().findRun(id);
  }

  public Optional<ReconciliationRun> latestRun() {
    return latestRun(null);
  }

  /** The latest finished run on {@code source} (the first when null). */
  public Optional<ReconciliationRun> latestRun(String source) {
    return of(source).store().latestFinishedRun();
  }

  /**
   * Up to {@code limit} finished runs on {@code source} (the first when null), newest first,
   * without items.
   */
  public List<ReconciliationRun> recentRuns(String source, int limit) {
    return of(source).store().recentRuns(limit);
  }

  public ReconciliationSettings settings() {
    return settings;
  }

  /** The meters of the first source. */
  public ReconciliationMetrics metrics() {
    return of((String) null).metrics();
  }

  public String owner() {
    return owner;
  }
}
