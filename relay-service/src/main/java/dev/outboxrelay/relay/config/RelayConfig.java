package dev.outboxrelay.relay.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Everything the relay reads, under {@code outbox.*}. Every key has a default except the
 * destinations. A key under {@code outbox.} that maps to nothing here fails start-up when it comes
 * from a properties file or a system property (SmallRye Config: {@code SRCFG00050}); an {@code
 * OUTBOX_*} environment variable that maps to nothing is logged ({@link UnknownVariableCheck}).
 * docs/configuration.md is generated from this interface and its Javadoc.
 */
@ConfigMapping(prefix = "outbox")
public interface RelayConfig {

  /**
   * Schema holding the outbox tables; unset: the datasource connection's default schema. Created by
   * the migration when missing. A plain lower-case identifier ({@code [a-z_][a-z0-9_]*}, at most 63
   * characters, no SQL keyword), checked at start-up: anything else fails start-up naming this key.
   */
  Optional<String> schema();

  /**
   * Base name of the outbox tables: {@code <table>_message}, {@code <table>_attempt}, {@code
   * <table>_payload}, ... and Flyway's history {@code <table>_schema_history} (PostgreSQL: wake-up
   * channel {@code <table>_ready}). Give two outboxes in one schema different names. A plain
   * lower-case identifier ({@code [a-z_][a-z0-9_]*}, at most 30 characters), checked at start-up:
   * anything else fails start-up naming this key.
   */
  @WithDefault("outbox")
  String table();

  /** The claim loop, leases, retries and the reaper: {@code outbox.relay.*}. */
  Relay relay();

  /** Sink routes by destination name: {@code outbox.destinations.<name>.type=http}, ... */
  Map<String, Destination> destinations();

  /** The reconciliation job: {@code outbox.reconciliation.*}. */
  Reconciliation reconciliation();

  /** The broker connection of the RabbitMQ destinations: {@code outbox.rabbitmq.*}. */
  RabbitMq rabbitmq();

  /** Deleting old finished jobs: {@code outbox.retention.*}. */
  Retention retention();

  /**
   * Outbox databases by source name, each with its own claim loop, reaper, dialect and health:
   * {@code outbox.sources.<name>.datasource=<Quarkus datasource>}. When none is set, the relay has
   * one source named {@code default} on {@code outbox.relay.datasource} (docs/relay.md "Several
   * databases").
   */
  Map<String, Source> sources();

  /**
   * One outbox database. The name (letters, digits, {@code -} and {@code _}) tags its metrics
   * ({@code source=<name>}) and its health entry, and selects it in {@code ?source=} of the
   * reconciliation endpoints.
   */
  interface Source {
    /**
     * Name of the Quarkus datasource holding this source's outbox ({@code h2}, {@code postgresql},
     * {@code mariadb}, {@code sqlserver}, or one added to the relay's application.properties); its
     * {@code jdbc.url} must be set. Two sources cannot share a datasource.
     */
    String datasource();

    /**
     * Jobs claimed by one claim statement of this source at most; default {@code
     * outbox.relay.batch-size}.
     */
    OptionalInt batchSize();

    /**
     * Deliveries of this source in flight at once; default {@code outbox.relay.concurrency}. Its
     * datasource's {@code jdbc.max-size} must be at least the smaller of this and 16, + 4.
     */
    OptionalInt concurrency();
  }

  interface Relay {
    /** Run the claim loop and reaper in this process. */
    @WithDefault("true")
    boolean enabled();

    /**
     * Name of the Quarkus datasource holding the outbox ({@code h2}, {@code postgresql}, {@code
     * mariadb} or {@code sqlserver}); when unset, the only active one (the one whose {@code
     * jdbc.url} is set). For one database only: with {@code outbox.sources.*} set, each source
     * names its own and this must stay unset.
     */
    Optional<String> datasource();

    /**
     * Create or upgrade the outbox tables at start-up (history table {@code
     * <table>_schema_history}).
     */
    @WithDefault("true")
    boolean migrateAtStart();

    /** Jobs claimed by one claim statement at most. */
    @WithDefault("64")
    int batchSize();

    /**
     * Deliveries in flight at once (per source, across destinations); the relay never claims more
     * than it has room to send. A send in flight holds no thread (a sink answers a {@code
     * CompletionStage}); at most this many worker threads (and at most 16) start sends and record
     * their outcomes, each on a connection, so the datasource's {@code jdbc.max-size} must be at
     * least the smaller of this and 16, + 4 (20 for the default; default pool 48), checked at
     * start-up; on PostgreSQL the notification listener needs one more, else the relay logs a
     * warning and polls. A large concurrency for slow sinks needs no larger pool.
     */
    @WithDefault("32")
    int concurrency();

    /**
     * Deliveries in flight at once to one destination (per source), within {@link #concurrency()},
     * so that a slow destination cannot take every place and hold up the others: its further jobs
     * wait, claimed, while the other destinations' jobs go past them. Unset: {@link #concurrency()}
     * when the relay has one destination, else half of it (at least 1). A destination's own {@code
     * outbox.destinations.<name>.concurrency} wins.
     */
    OptionalInt destinationConcurrency();

    /**
     * Successful sends recorded as delivered by one statement (one transaction) at most: workers
     * hand in their job and wait for the batch, which is flushed when this many wait, when every
     * job in flight waits, or after {@link #completionMaxWait()}. Each job is completed only while
     * it still holds its claim; a failed flush commits nothing and its jobs are retried, or
     * re-offered after their lease. 1 flushes every job on its own.
     */
    @WithDefault("128")
    int completionBatchSize();

    /**
     * Longest time a successful send waits for more to share its completion batch while other jobs
     * are still being sent (see {@link #completionBatchSize()}): added latency at most, traded for
     * one transaction per batch.
     */
    @WithDefault("2ms")
    Duration completionMaxWait();

    /**
     * Jobs of one ordering key that a completion claims at once for this relay when it completes
     * the key's last job the relay holds (the key's run: its next ready, due jobs, up to the first
     * that is not): they are sent one after the other, each as soon as the sink took the one
     * before, and share completion batches, so a busy key moves at its sink's pace rather than one
     * job per completion transaction (docs/design.md "Ordering keys"). FIFO per key holds for first
     * sends; a job that fails gives the rest of its run back unsent. After a crash between a send
     * and its recording, the redelivery may repeat job k after job k+1 reached the receiver: a
     * receiver that deduplicates by operation ID (as the delivery contract asks) still applies each
     * job once and in order; one that does not should set 1 (only the key's next job, sent once the
     * one before it is recorded).
     */
    @WithDefault("16")
    int keyRunLength();

    /** Lease taken by a claim; renewed every lease/3 while a send runs. */
    @WithDefault("30s")
    Duration leaseDuration();

    /** Attempts before a job ends DEAD ({@code D}). */
    @WithDefault("10")
    int maxAttempts();

    /** Retry delays after a transient failure. */
    Backoff backoff();

    /** First wait after an empty claim; doubles up to {@link #idleMaxWait()}. */
    @WithDefault("10ms")
    Duration idleMinWait();

    /**
     * Longest wait between claims while the outbox stays empty (on PostgreSQL a notification cuts
     * the wait short, see {@link #listenNotify()}).
     */
    @WithDefault("1s")
    Duration idleMaxWait();

    /**
     * PostgreSQL only: listen for the notification the outbox's insert trigger sends at commit
     * ({@code LISTEN outbox_ready}, migration V4) and claim at once instead of waiting out the idle
     * wait. Takes one connection of the datasource for as long as the relay runs (when the pool has
     * one beyond what {@link #concurrency()} needs; else a warning, and polling only). Polling
     * stays on as the fallback: a lost notification only costs up to {@link #idleMaxWait()}.
     * Ignored on the other databases, which poll.
     */
    @WithDefault("true")
    boolean listenNotify();

    /** How often expired leases are returned to ready. */
    @WithDefault("5s")
    Duration reapInterval();

    /** Expired leases released by one reaper statement at most. */
    @WithDefault("500")
    int reapBatchSize();

    /**
     * On shutdown: time for in-flight sends to finish before they are interrupted and released to
     * ready ({@code R}). A container's termination grace period must be longer.
     */
    @WithDefault("10s")
    Duration shutdownGrace();

    /**
     * How often the state gauges (outbox_messages, oldest ready age) are read from the database.
     */
    @WithDefault("5s")
    Duration metricsRefreshInterval();

    /**
     * Readiness turns DOWN while the oldest undelivered job (gauge {@code
     * outbox_ready_oldest_age_seconds}) is older than this (the backlog is not being drained: sink
     * down, relays stuck or too few); UP again when it drains. A due job ages from its
     * deliver_after; a job being retried from its first attempt, so backoff does not reset its age.
     */
    @WithDefault("5m")
    Duration readyMaxBacklogAge();

    /**
     * Longest pause between retries while a source's database is down (or not reachable at
     * start-up): pauses start at 100ms and double up to this. The other sources keep delivering.
     */
    @WithDefault("30s")
    Duration errorMaxWait();

    /**
     * While a source's database or a destination is DOWN, the log repeats that it is at most this
     * often; going DOWN and coming back UP are logged once each (docs/operations.md "When something
     * is down").
     */
    @WithDefault("1m")
    Duration outageReminderInterval();

    /**
     * Fewest failed deliveries (refused, timed out, 5xx, 429: anything retried) within {@code
     * destination-health-window} that make a destination DOWN, when they are also at least {@code
     * destination-down-failure-rate} of its deliveries in that window.
     */
    @WithDefault("3")
    int destinationDownAfterFailures();

    /**
     * The window over which a destination's failed share of deliveries is counted, for going DOWN
     * and coming back UP (its hysteresis: a few retried deliveries among many never make it DOWN).
     * A busy destination that stops answering is DOWN within about this long.
     */
    @WithDefault("10s")
    Duration destinationHealthWindow();

    /**
     * A destination is DOWN when its failed deliveries are at least this share (0 to 1) of its
     * deliveries in {@code destination-health-window} (and at least {@code
     * destination-down-after-failures} of them).
     */
    @WithDefault("0.5")
    double destinationDownFailureRate();

    /**
     * A DOWN destination is UP again at an answered delivery (delivered, or refused for good) once
     * its failed share in {@code destination-health-window} is below this (lower than {@code
     * destination-down-failure-rate}, so that readiness does not flap around one threshold).
     */
    @WithDefault("0.1")
    double destinationUpFailureRate();
  }

  /** Retry delays after a transient failure: exponential with jitter, capped. */
  interface Backoff {
    /** Delay after the first failed attempt. */
    @WithDefault("1s")
    Duration initialDelay();

    /** Each further delay is the previous one times this. */
    @WithDefault("2.0")
    double multiplier();

    /** Cap of the delay between attempts (a sink's {@code Retry-After} wins, up to 24h). */
    @WithDefault("5m")
    Duration maxDelay();

    /** Fraction of the delay randomised either way (0 to 1). */
    @WithDefault("0.2")
    double jitter();
  }

  /** One destination: where its jobs are delivered and how they are reconciled. */
  interface Destination {
    /**
     * Sink type: {@code http}, {@code kafka} or {@code rabbitmq}. Required: a destination without
     * one fails start-up naming the environment variables that gave it its other settings.
     */
    Optional<String> type();

    /** Kafka topic for {@code kafka}; default: the destination's name. */
    Optional<String> topic();

    /** RabbitMQ exchange for {@code rabbitmq}; default {@code outbox.rabbitmq.exchange}. */
    Optional<String> exchange();

    /** RabbitMQ routing key for {@code rabbitmq}; default: the destination's name. */
    Optional<String> routingKey();

    /**
     * Deliveries in flight at once to this destination (per source, at least 1); default {@code
     * outbox.relay.destination-concurrency}.
     */
    OptionalInt concurrency();

    /** Endpoint the job is POSTed to; required for {@code http}. */
    Optional<URI> url();

    /** Connecting to the endpoint ({@code http}); a timeout is a retry. */
    @WithDefault("2s")
    Duration connectTimeout();

    /**
     * Whole request, response included (Kafka: until the broker acknowledges, and never shorter
     * than the producer's own bound, {@code max.block.ms} + {@code delivery.timeout.ms}; RabbitMQ:
     * until the publisher confirm); a timeout is a retry.
     */
    @WithDefault("10s")
    Duration requestTimeout();

    /**
     * Shared secret for {@code X-Outbox-Signature} (HMAC-SHA256 over the timestamp and the body,
     * see {@code WebhookSignature}); when unset, requests go unsigned. Never logged. A key set to
     * an empty or blank value fails start-up. Prefer the environment ({@code
     * OUTBOX_DESTINATIONS_<NAME>_HMAC_SECRET}) to a {@code -D} on the command line.
     */
    Optional<String> hmacSecret();

    /** Where this destination's applied operations are read from, for reconciliation. */
    Confirmation confirmation();

    /** What reconciliation may change for this destination besides S → C. */
    Reconcile reconcile();
  }

  /**
   * The one AMQP connection every RabbitMQ destination publishes over (each destination on a
   * channel of its own, with publisher confirms and {@code mandatory}). The connection keys default
   * to the {@code rabbitmq-host}, {@code rabbitmq-port}, {@code rabbitmq-username}, {@code
   * rabbitmq-password} and {@code rabbitmq-virtual-host} keys (environment {@code RABBITMQ_HOST},
   * ...), so a deployment that sets those needs nothing here.
   */
  interface RabbitMq {
    /** Broker host. */
    @WithDefault("${rabbitmq-host:localhost}")
    String host();

    /** Broker AMQP port. */
    @WithDefault("${rabbitmq-port:5672}")
    int port();

    /** User the relay logs in as. */
    @WithDefault("${rabbitmq-username:guest}")
    String username();

    /** That user's password. Never logged. */
    @WithDefault("${rabbitmq-password:guest}")
    String password();

    /** Virtual host. */
    @WithDefault("${rabbitmq-virtual-host:/}")
    String virtualHost();

    /** TLS to the broker, verifying its certificate and host name against the JVM's trust store. */
    @WithDefault("${rabbitmq-ssl:false}")
    boolean tls();

    /**
     * The exchange of a RabbitMQ destination that names none ({@code
     * outbox.destinations.<name>.exchange}).
     */
    @WithDefault("outbox")
    String exchange();

    /**
     * Whether the relay declares each destination's exchange (durable, of {@code exchange-type})
     * whenever it opens the destination's channel: at the first delivery and after a channel or
     * connection was lost, so an exchange deleted while the relay runs comes back, without its
     * bindings (messages to it are then unroutable: retried, then {@code D}). Set {@code false} in
     * production to leave exchanges to the broker's owner: a missing exchange is then a retry with
     * the broker's {@code NOT_FOUND - no exchange} in {@code last_error}.
     */
    @WithDefault("true")
    boolean declareExchanges();

    /**
     * Type of the exchanges the relay declares ({@code topic}, {@code direct}, {@code fanout},
     * {@code headers}).
     */
    @WithDefault("topic")
    String exchangeType();
  }

  /**
   * A destination's confirmation source: {@code none} (not reconciled), {@code http-ledger} (the
   * external system lists what it applied at {@code url}, paged by time, like the demo sink's
   * {@code GET /ledger}) or {@code table} (consumers write {@code outbox_confirmation}).
   */
  interface Confirmation {
    /**
     * {@code none} (not reconciled), {@code http-ledger} or {@code table} (docs/reconciliation.md
     * "Reconciliation").
     */
    @WithDefault("none")
    String type();

    /**
     * The ledger endpoint, required for {@code http-ledger} (e.g. {@code
     * http://billing.internal/ledger}); queried with {@code ?since=<instant>&limit=}.
     */
    Optional<URI> url();
  }

  interface Reconcile {
    /** Re-drive sent_unconfirmed jobs (S → R, same operation ID, so the sink can deduplicate). */
    @WithDefault("false")
    boolean redriveUnconfirmed();

    /** Mark confirmed_not_sent jobs (R or D) confirmed (C) with sent_at and confirmed_at. */
    @WithDefault("false")
    boolean acceptConfirmedNotSent();
  }

  /** The reconciliation job (one relay at a time across the fleet, through a database lease). */
  interface Reconciliation {
    /** Run on the schedule in this relay; POST /reconciliation/runs works either way. */
    @WithDefault("true")
    boolean enabled();

    /** How often a scheduled run starts; windows end on multiples of it (database clock). */
    @WithDefault("5m")
    Duration interval();

    /**
     * Jobs created in [window end - window, window end) are reconciled by a scheduled run; at least
     * the interval.
     */
    @WithDefault("1h")
    Duration window();

    /** A sent job counts as unconfirmed only once it was sent longer ago than this. */
    @WithDefault("5m")
    Duration gracePeriod();

    /** Lease of the fleet-wide lock a run holds; renewed between destinations. */
    @WithDefault("5m")
    Duration lease();
  }

  /**
   * Retention: deletes sent ({@code S}) and confirmed ({@code C}) jobs older than {@link #keep()}
   * (database clock), with their attempts and bodies, in small batches, one relay at a time across
   * the fleet (the {@code retention} lease in {@code outbox_lock}).
   */
  interface Retention {
    /** Run retention on the schedule in this relay. */
    @WithDefault("true")
    boolean enabled();

    /**
     * How long sent jobs (since sent_at) and confirmed jobs (since confirmed_at) are kept; keep it
     * well above the reconciliation window, or unconfirmed sent jobs are deleted before they are
     * reconciled.
     */
    @WithDefault("7d")
    Duration keep();

    /** How often a retention pass starts (a pass that ran on any relay within half of it skips). */
    @WithDefault("10m")
    Duration interval();

    /** Jobs deleted by one statement, its own short transaction (1 to 5000). */
    @WithDefault("500")
    int batchSize();

    /** Jobs one pass deletes at most (at least the batch size); the next pass goes on. */
    @WithDefault("100000")
    int maxPerPass();
  }
}
