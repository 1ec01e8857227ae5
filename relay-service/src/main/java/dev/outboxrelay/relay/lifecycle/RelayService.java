package dev.outboxrelay.relay.lifecycle;

import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.relay.claim.Backoff;
import dev.outboxrelay.relay.claim.ClaimLoop;
import dev.outboxrelay.relay.config.ConfigChecks;
import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.metrics.RelayMetrics;
import dev.outboxrelay.relay.sink.BrokerChannels;
import dev.outboxrelay.relay.sink.HttpSink;
import dev.outboxrelay.relay.sink.KafkaChannel;
import dev.outboxrelay.relay.sink.RabbitMqConnection;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.source.RelayInstance;
import dev.outboxrelay.relay.source.RelaySource;
import dev.outboxrelay.relay.source.SourceSpec;
import dev.outboxrelay.relay.state.DestinationStates;
import dev.outboxrelay.relay.tracing.DeliveryTracing;
import dev.outboxrelay.relay.web.ProblemException;
import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Tracer;
import io.quarkus.agroal.runtime.AgroalDataSourceUtil;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * Owns the relay's sources ({@link RelaySource}, one per outbox database) and the destinations'
 * states for the life of the process. The single-source accessors ({@link #store()}, {@link
 * #claimLoop()}, ...) are the first source's, which is the only one unless {@code outbox.sources.*}
 * names several.
 */
@ApplicationScoped
public class RelayService {
  private static final Logger LOG = Logger.getLogger(RelayService.class);

  /**
   * The named datasources declared in application.properties, one per supported database, named as
   * its dialect ({@link DialectDetector#names()}).
   */
  static final List<String> OUTBOX_DATASOURCES = DialectDetector.names();

  @Inject RelayConfig config;
  @Inject MeterRegistry registry;
  @Inject KafkaChannel kafkaChannel;

  /**
   * Quarkus OpenTelemetry's tracer: a no-op one while quarkus.otel.sdk.disabled=true (the default).
   */
  @Inject Tracer tracer;

  private volatile List<RelaySource> sources = List.of();
  private volatile OutboxTables tables = OutboxTables.DEFAULT;
  private volatile DestinationStates destinations;
  private volatile RabbitMqConnection rabbitMq;

  void onStart(@Observes StartupEvent event) {
    // First: a hostile outbox.schema / outbox.table fails start-up, naming the key, before any SQL.
    OutboxTables tables = OutboxTables.of(config.schema(), config.table());
    this.tables = tables;
    if (!tables.isDefault()) {
      LOG.infof("outbox tables: %s_message and its siblings (outbox.schema, outbox.table)", tables);
    }
    RelayConfig.Relay relay = config.relay();
    RabbitMqConnection rabbit =
        RabbitMqConnection.of(
            config.rabbitmq(), registry, "outbox-relay " + RelayInstance.newName());
    rabbitMq = rabbit;
    SinkRegistry sinks =
        SinkRegistry.fromConfig(
            config.destinations(),
            key -> ConfigProvider.getConfig().getConfigValue(key).getRawValue(),
            new BrokerChannels(kafkaChannel, KafkaChannel.verdictWithin(), rabbit));
    Backoff backoff = Backoff.fromConfig(relay.backoff());
    if (relay.maxAttempts() < 1) {
      throw new IllegalArgumentException(
          "outbox.relay.max-attempts must be >= 1, was " + relay.maxAttempts());
    }
    ConfigChecks.positive("outbox.relay.error-max-wait", relay.errorMaxWait());
    ConfigChecks.positive("outbox.relay.outage-reminder-interval", relay.outageReminderInterval());
    Set<String> active = new TreeSet<>();
    for (String name : OUTBOX_DATASOURCES) {
      if (AgroalDataSourceUtil.dataSourceIfActive(name).isPresent()) {
        active.add(name);
      }
    }
    for (RelayConfig.Source s : config.sources().values()) {
      // A datasource declared beyond the four in application.properties (and a rebuild).
      String name = s.datasource().strip();
      try {
        if (!name.isEmpty() && AgroalDataSourceUtil.dataSourceIfActive(name).isPresent()) {
          active.add(name);
        }
      } catch (RuntimeException e) {
        // not a datasource: SourceSpec names the key
      }
    }
    List<SourceSpec> specs = SourceSpec.fromConfig(config, active, OUTBOX_DATASOURCES);
    DestinationStates states =
        new DestinationStates(
            sinks.destinations(),
            registry,
            Clock.systemUTC(),
            relay.outageReminderInterval(),
            new DestinationStates.Hysteresis(
                relay.destinationHealthWindow(),
                relay.destinationDownAfterFailures(),
                relay.destinationDownFailureRate(),
                relay.destinationUpFailureRate()));
    RelaySource.Wiring wiring =
        new RelaySource.Wiring(
            relay,
            tables,
            registry,
            sinks.observed(states),
            backoff,
            DeliveryTracing.of(tracer, sinks),
            Clock.systemUTC());
    List<RelaySource> started = new ArrayList<>();
    for (SourceSpec spec : specs) {
      AgroalDataSource ds =
          AgroalDataSourceUtil.dataSourceIfActive(spec.datasource()).orElseThrow();
      started.add(new RelaySource(spec, ds, wiring));
    }
    destinations = states;
    sources = List.copyOf(started);
    for (RelaySource source : started) {
      source.start();
    }
    LOG.infof(
        "relay %s: sources %s, destinations %s, lease %s, max attempts %d%s",
        relay.enabled() ? "started" : "started with delivery disabled",
        started.stream()
            .map(
                s ->
                    s.name()
                        + " ("
                        + s.spec().datasource()
                        + ", "
                        + s.dialect()
                        + (s.started() ? "" : ", DOWN: retrying")
                        + ")")
            .toList(),
        sinks.destinations(),
        relay.leaseDuration(),
        relay.maxAttempts(),
        signedNote(sinks));
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

  void onStop(@Observes ShutdownEvent event) {
    Duration grace = config.relay().shutdownGrace();
    for (RelaySource source : sources) {
      source.stop(grace);
    }
    if (rabbitMq != null) {
      rabbitMq.close();
    }
  }

  /** Every source, in name order ({@code default} alone without {@code outbox.sources.*}). */
  public List<RelaySource> sources() {
    return sources;
  }

  /**
   * The source named {@code name}; the first one when {@code name} is null or blank (the only one
   * on a single-database relay). An unknown name is a 400 naming the query parameter {@code
   * source}.
   */
  public RelaySource source(String name) {
    List<RelaySource> all = sources;
    if (name == null || name.isBlank()) {
      if (all.isEmpty()) {
        throw new IllegalStateException("the relay has not started");
      }
      return all.get(0);
    }
    for (RelaySource s : all) {
      if (s.name().equals(name.strip())) {
        return s;
      }
    }
    throw ProblemException.badRequest(
        "source",
        "unknown source '" + name + "'; sources: " + all.stream().map(RelaySource::name).toList());
  }

  /** The destinations' up/down states. */
  public DestinationStates destinations() {
    return destinations;
  }

  /** The first source's relay store (throws while its database has not answered since start-up). */
  public OutboxStore store() {
    return source(null).store();
  }

  /** The first source's counts, jobs and operator actions (throws as {@link #store()} does). */
  public OutboxAdminStore admin() {
    return source(null).admin();
  }

  /** The first source's database (for services that keep their own store on it). */
  public AgroalDataSource dataSource() {
    return source(null).dataSource();
  }

  /** The first source's claim loop, or null before it started. */
  public ClaimLoop claimLoop() {
    return source(null).claimLoop();
  }

  /** The first source's meters, or null before it started. */
  public RelayMetrics metrics() {
    return source(null).metrics();
  }

  /**
   * The outbox's table names ({@code outbox.schema}, {@code outbox.table}), as validated at
   * start-up.
   */
  public OutboxTables tables() {
    return tables;
  }
}
