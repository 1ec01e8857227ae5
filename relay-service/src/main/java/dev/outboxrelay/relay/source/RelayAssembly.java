package dev.outboxrelay.relay.source;

import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.relay.claim.Backoff;
import dev.outboxrelay.relay.claim.ClaimLoop;
import dev.outboxrelay.relay.claim.CompletionBatcher;
import dev.outboxrelay.relay.claim.Deliverer;
import dev.outboxrelay.relay.claim.IdleWait;
import dev.outboxrelay.relay.claim.ReadyListener;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.lease.LeaseHeartbeat;
import dev.outboxrelay.relay.lease.LeaseReaper;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.state.StateChangeLog;
import dev.outboxrelay.relay.tracing.DeliveryTracing;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jboss.logging.Logger;

/**
 * The relay's delivery services wired together from one configuration. The relay ({@code
 * RelayService}) runs what this builds, and so does the benchmark (in-process, with a no-op sink):
 * one wiring, so a measured relay is the production relay. Nothing is started here; the caller
 * starts the claim loop (which starts the heartbeat and the completion flusher, and stops them) and
 * runs the reaper, the gauges ({@code GaugeRefresh}) and the listener on {@link
 * dev.outboxrelay.relay.background.ServiceRunner}s.
 */
public record RelayAssembly(
    JdbcOutboxStore store,
    RelayMetrics metrics,
    LeaseHeartbeat heartbeat,
    LeaseReaper reaper,
    ClaimLoop claimLoop) {
  private static final Logger LOG = Logger.getLogger(RelayAssembly.class);

  /**
   * A single-source relay on the default table names without tracing (the benchmark's wiring).
   *
   * @param clockSkew database clock minus this process's clock, for commit-to-sent latency
   */
  public static RelayAssembly assemble(
      DataSource dataSource,
      MeterRegistry registry,
      SinkRegistry sinks,
      RelayConfig.Relay relay,
      Backoff backoff,
      IdleWait idle,
      Supplier<Duration> clockSkew) {
    return assemble(
        dataSource,
        OutboxTables.DEFAULT,
        registry,
        sinks,
        relay,
        new SourceSpec(SourceSpec.DEFAULT, "", relay.batchSize(), relay.concurrency()),
        backoff,
        idle,
        clockSkew,
        DeliveryTracing.OFF,
        StateChangeLog.logging("source '" + SourceSpec.DEFAULT + "' database", LOG));
  }

  /**
   * One source's services: batch size, concurrency and the {@code source} tag of its meters from
   * {@code source}. Connects to detect the dialect (throws when the database is down).
   *
   * @param tables the names of the outbox tables ({@code outbox.schema}, {@code outbox.table})
   * @param clockSkew database clock minus this process's clock, for commit-to-sent latency
   * @param tracing the span every delivery attempt runs in (docs/relay.md "Tracing")
   * @param database the source's state, told of every database error and success (which logs each
   *     change once)
   */
  public static RelayAssembly assemble(
      DataSource dataSource,
      OutboxTables tables,
      MeterRegistry registry,
      SinkRegistry sinks,
      RelayConfig.Relay relay,
      SourceSpec source,
      Backoff backoff,
      IdleWait idle,
      Supplier<Duration> clockSkew,
      DeliveryTracing tracing,
      StateChangeLog database) {
    JdbcOutboxStore store = JdbcOutboxStore.create(dataSource, tables);
    RelayMetrics metrics = new RelayMetrics(registry, source.name());
    metrics.destinations(sinks.destinations());
    LeaseHeartbeat heartbeat =
        new LeaseHeartbeat(
            store,
            relay.leaseDuration(),
            SourceSpec.DEFAULT.equals(source.name()) ? null : source.name(),
            c -> metrics.staleCompletion("renew"));
    LeaseReaper reaper =
        new LeaseReaper(
            store,
            metrics,
            relay.maxAttempts(),
            relay.reapBatchSize(),
            attempt -> backoff.delay(attempt, Optional.empty()));
    Deliverer deliverer =
        new Deliverer(
                store,
                sinks,
                backoff,
                metrics,
                relay.maxAttempts(),
                relay.leaseDuration(),
                clockSkew)
            .traced(tracing)
            .madeBy(RelayInstance.NAME);
    CompletionBatcher completions =
        new CompletionBatcher(
            store, relay.completionBatchSize(), relay.completionMaxWait(), relay.leaseDuration());
    deliverer.completingInBatches(completions);
    ClaimLoop claimLoop =
        new ClaimLoop(
            store,
            deliverer,
            heartbeat,
            source.batchSize(),
            source.concurrency(),
            relay.leaseDuration(),
            idle);
    int destinationConcurrency =
        ClaimLoop.destinationConcurrency(
            relay.destinationConcurrency(), source.concurrency(), sinks.destinations().size());
    claimLoop
        .limitingDestinations(d -> sinks.concurrency(d).orElse(destinationConcurrency))
        .runningKeys(relay.keyRunLength());
    completions
        .flushWhenAllWaiting(
            () -> claimLoop.sendingOrRecording() + claimLoop.queuedBehindTheirKey())
        .handingOverTo(claimLoop, relay.leaseDuration());
    if (!SourceSpec.DEFAULT.equals(source.name())) {
      claimLoop.namedAfter(source.name());
    }
    heartbeat.reportingTo(database);
    completions.reportingTo(database);
    deliverer.reportingTo(database);
    claimLoop.reportingTo(database, relay.errorMaxWait());
    metrics.claimStatements(claimLoop::claimStatements);
    return new RelayAssembly(store, metrics, heartbeat, reaper, claimLoop);
  }

  /**
   * The listener that wakes this assembly's claim loop when jobs are committed, when the database
   * sends such notifications (PostgreSQL) and {@code outbox.relay.listen-notify} is on; not
   * started. It holds one connection of {@code dataSource} while it runs.
   */
  public Optional<ReadyListener> readyListener(DataSource dataSource, RelayConfig.Relay relay) {
    if (!relay.listenNotify()) {
      return Optional.empty();
    }
    return store
        .readyNotifications()
        .map(
            n ->
                new ReadyListener(
                    dataSource::getConnection,
                    n,
                    () -> {
                      metrics.claimWakeup();
                      claimLoop.wake();
                    }));
  }
}
