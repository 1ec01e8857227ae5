package dev.outboxrelay.relay.metrics;

import dev.outboxrelay.outbox.store.AttemptOutcome;
import dev.outboxrelay.outbox.store.DestinationBacklog;
import dev.outboxrelay.outbox.store.JobState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One source's meters, each tagged {@code source=<name>} (docs/relay.md "Several databases").
 * Prometheus names: {@code outbox_stale_completions_total{update}}, {@code
 * outbox_expired_leases_total}, {@code outbox_dead_total}, {@code
 * outbox_delivery_attempts_total{destination,outcome}}, {@code outbox_delivery_seconds}, {@code
 * outbox_end_to_end_seconds}, {@code outbox_messages{state}}, {@code
 * outbox_ready_oldest_age_seconds}, {@code outbox_destination_ready{destination}}, {@code
 * outbox_destination_ready_oldest_age_seconds{destination}}, {@code outbox_claim_statements_total},
 * {@code outbox_claim_wakeups_total{via}}.
 */
public class RelayMetrics {
  private final MeterRegistry registry;
  private final Tags tags;
  private final Map<String, Counter> staleCompletions = new ConcurrentHashMap<>();
  private final Counter expiredLeases;
  private final Counter dead;
  private final Timer endToEnd;
  private final Counter claimWakeups;
  private final Map<Character, AtomicLong> messagesByState = new ConcurrentHashMap<>();
  private final AtomicLong oldestReadyAgeMillis = new AtomicLong();

  /** Per destination ever seen waiting: ready due jobs and oldest age in ms; 0 once it drains. */
  private final Map<String, AtomicLong[]> destinationBacklog = new ConcurrentHashMap<>();

  /** Strong reference to the claim-statement counter's source (see {@link #claimStatements}). */
  private volatile Supplier<Number> claimStatements;

  /** The meters of the single source {@code default}. */
  public RelayMetrics(MeterRegistry registry) {
    this(registry, "default");
  }

  /** The meters of source {@code source}. */
  public RelayMetrics(MeterRegistry registry, String source) {
    this.registry = registry;
    this.tags = Tags.of("source", source);
    for (String update : STALE_UPDATES) {
      staleCompletions.put(
          update,
          Counter.builder("outbox.stale.completions")
              .tag("update", update)
              .tags(tags)
              .description("Token-checked updates that changed no row: ownership was lost")
              .register(registry));
    }
    expiredLeases =
        Counter.builder("outbox.expired.leases")
            .tags(tags)
            .description("Leases the reaper returned after they expired")
            .register(registry);
    dead =
        Counter.builder("outbox.dead")
            .tags(tags)
            .description("Jobs moved to DEAD")
            .register(registry);
    endToEnd =
        Timer.builder("outbox.end.to.end")
            .tags(tags)
            .description("From the job's commit to the sink's acceptance")
            .publishPercentileHistogram()
            .register(registry);
    for (JobState s : JobState.values()) {
      AtomicLong value = new AtomicLong();
      messagesByState.put(s.code(), value);
      Gauge.builder("outbox.messages", value, AtomicLong::get)
          .tag("state", String.valueOf(s.code()))
          .tags(tags)
          .description("Jobs per state, read every metrics-refresh-interval")
          .register(registry);
    }
    claimWakeups =
        Counter.builder("outbox.claim.wakeups")
            .tag("via", "notify")
            .tags(tags)
            .description(
                "Idle waits of the claim loop cut short by a database notification of committed jobs")
            .register(registry);
    Gauge.builder("outbox.ready.oldest.age.seconds", oldestReadyAgeMillis, v -> v.get() / 1000.0)
        .tags(tags)
        .description(
            "Age of the oldest undelivered job: due and never tried, or being retried (0 when none)")
        .register(registry);
  }

  /** The {@code outcome} tag of an attempt whose recording got no answer. */
  public static final String UNKNOWN_OUTCOME = "unknown";

  /** The token-checked updates a relay makes on a claimed job. */
  public static final List<String> STALE_UPDATES =
      List.of("delivered", "retry", "dead", "renew", "release");

  /** The transition recording {@code outcome} found the job owned by someone else. */
  public void staleCompletion(AttemptOutcome outcome) {
    staleCompletion(outcomeTag(outcome));
  }

  /** A token-checked update ({@link #STALE_UPDATES}) found the job owned by someone else. */
  public void staleCompletion(String update) {
    Counter c = staleCompletions.get(update);
    if (c == null) {
      throw new IllegalArgumentException(
          "unknown update '" + update + "', expected one of " + STALE_UPDATES);
    }
    c.increment();
  }

  /**
   * Counts the claim statements a claim loop runs (idle polling cost). The supplier is kept here: a
   * function counter holds its object only weakly, and a method reference nobody else holds would
   * be collected at the next GC, leaving the counter stuck.
   */
  public void claimStatements(Supplier<Number> count) {
    claimStatements = count;
    FunctionCounter.builder("outbox.claim.statements", count, c -> c.get().doubleValue())
        .tags(tags)
        .description("Claim statements run, empty ones included")
        .register(registry);
  }

  /** The claim loop was woken by a notification ({@code via=notify}). */
  public void claimWakeup() {
    claimWakeups.increment();
  }

  public double claimWakeupCount() {
    return claimWakeups.count();
  }

  public void expiredLeases(int count) {
    expiredLeases.increment(count);
  }

  public void dead(int count) {
    dead.increment(count);
  }

  /**
   * The {@code outcome} tag of an attempt: the outcome's name in lower case ({@code delivered},
   * {@code retry}, {@code dead}, {@code stale}); null, an attempt whose recording got no answer, is
   * {@value #UNKNOWN_OUTCOME}.
   */
  public static String outcomeTag(AttemptOutcome outcome) {
    return outcome == null ? UNKNOWN_OUTCOME : outcome.name().toLowerCase(Locale.ROOT);
  }

  /**
   * One attempt, counted under its outcome ({@link #outcomeTag}; null: no try to record it got an
   * answer).
   */
  public void attempt(String destination, AttemptOutcome outcome, Duration took) {
    registry
        .counter(
            "outbox.delivery.attempts",
            tags.and("destination", destination, "outcome", outcomeTag(outcome)))
        .increment();
    Timer.builder("outbox.delivery")
        .tag("destination", destination)
        .tags(tags)
        .description("Time of one sink call")
        .publishPercentileHistogram()
        .register(registry)
        .record(took);
  }

  public void endToEnd(Duration commitToSent) {
    if (!commitToSent.isNegative()) {
      endToEnd.record(commitToSent);
    }
  }

  public void messagesByState(Map<Character, Long> counts) {
    counts.forEach(
        (state, n) -> {
          AtomicLong v = messagesByState.get(state);
          if (v != null) {
            v.set(n);
          }
        });
  }

  public void oldestReadyAge(Duration age) {
    oldestReadyAgeMillis.set(age.toMillis());
  }

  public Duration oldestReadyAge() {
    return Duration.ofMillis(oldestReadyAgeMillis.get());
  }

  /** Registers the backlog gauges of the configured destinations at 0, before any refresh. */
  public void destinations(Collection<String> destinations) {
    destinations.forEach(this::destinationGauges);
  }

  /**
   * Sets the per-destination backlog gauges from one refresh. A destination's gauges are registered
   * the first time it has waiting jobs; a destination absent from {@code backlog} (nothing waiting
   * any more) drops to 0 instead of keeping its last value.
   */
  public void destinationBacklog(Map<String, DestinationBacklog> backlog) {
    backlog.keySet().forEach(this::destinationGauges);
    destinationBacklog.forEach(
        (destination, values) -> {
          DestinationBacklog b = backlog.get(destination);
          values[0].set(b == null ? 0 : b.ready());
          values[1].set(b == null ? 0 : b.oldestReadyAge().toMillis());
        });
  }

  /**
   * A destination's ready-job count and oldest-ready age at the last refresh (zero when unknown).
   */
  public DestinationBacklog destinationBacklog(String destination) {
    AtomicLong[] values = destinationBacklog.get(destination);
    return values == null
        ? new DestinationBacklog(0, Duration.ZERO)
        : new DestinationBacklog(values[0].get(), Duration.ofMillis(values[1].get()));
  }

  private AtomicLong[] destinationGauges(String destination) {
    return destinationBacklog.computeIfAbsent(
        destination,
        d -> {
          AtomicLong[] values = {new AtomicLong(), new AtomicLong()};
          Tags t = tags.and("destination", d);
          Gauge.builder("outbox.destination.ready", values[0], AtomicLong::get)
              .tags(t)
              .description(
                  "Ready jobs due now or earlier, per destination, read every metrics-refresh-interval")
              .register(registry);
          Gauge.builder(
                  "outbox.destination.ready.oldest.age.seconds", values[1], v -> v.get() / 1000.0)
              .tags(t)
              .description(
                  "Age of the destination's oldest undelivered job, as outbox_ready_oldest_age_seconds"
                      + " (0 when none)")
              .register(registry);
          return values;
        });
  }

  public double staleCompletionCount() {
    return staleCompletions.values().stream().mapToDouble(Counter::count).sum();
  }
}
