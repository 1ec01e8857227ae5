package dev.outboxrelay.relay.reconciliation;

import dev.outboxrelay.outbox.store.ReconciliationCategory;
import dev.outboxrelay.outbox.store.ReconciliationRun;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Prometheus: {@code outbox_reconciliation_items{category}} (the counts of the fleet's latest
 * successful run) and {@code outbox_reconciliation_last_run_age_seconds} (since that run finished,
 * by the database clock; NaN before the first run). Read from the database, so every relay shows
 * the fleet's latest run, whichever relay ran it. {@code outbox_reconciliation_enabled} is 1 when
 * this relay runs reconciliation on a schedule (enabled, with a destination to reconcile), 0 when
 * only on demand: the alert on a reconciliation that never ran needs it, the age being NaN then.
 */
public class ReconciliationMetrics {
  private final Map<ReconciliationCategory, AtomicLong> items =
      new EnumMap<>(ReconciliationCategory.class);

  /** Age of the latest run when read, and System.nanoTime() then; null before any run. */
  private final AtomicReference<long[]> lastRun = new AtomicReference<>();

  public ReconciliationMetrics(MeterRegistry registry) {
    this(registry, "default", false);
  }

  /**
   * The meters of source {@code source} (tag {@code source=<name>}); {@code scheduled}: this relay
   * runs reconciliation on a schedule.
   */
  public ReconciliationMetrics(MeterRegistry registry, String source, boolean scheduled) {
    for (ReconciliationCategory c : ReconciliationCategory.REPORTED) {
      AtomicLong value = new AtomicLong();
      items.put(c, value);
      Gauge.builder("outbox.reconciliation.items", value, AtomicLong::get)
          .tag("category", c.wireName())
          .tag("source", source)
          .description(
              "Jobs and confirmations per category in the latest successful reconciliation run")
          .register(registry);
    }
    Gauge.builder("outbox.reconciliation.last.run.age.seconds", this, m -> m.lastRunAgeSeconds())
        .tag("source", source)
        .description(
            "Seconds since the latest successful reconciliation run finished (NaN: none yet)")
        .register(registry);
    Gauge.builder("outbox.reconciliation.enabled", () -> scheduled ? 1 : 0)
        .tag("source", source)
        .description("1 when this relay runs reconciliation on a schedule, 0 when only on demand")
        .register(registry);
  }

  /** The fleet's latest successful run and its age by the database clock when read. */
  public void latestRun(ReconciliationRun run, Duration age) {
    for (ReconciliationCategory c : ReconciliationCategory.REPORTED) {
      items.get(c).set(run.counts().getOrDefault(c, 0));
    }
    lastRun.set(new long[] {age.toNanos(), System.nanoTime()});
  }

  double lastRunAgeSeconds() {
    long[] read = lastRun.get();
    if (read == null) {
      return Double.NaN;
    }
    return (read[0] + (System.nanoTime() - read[1])) / 1e9;
  }

  public long items(ReconciliationCategory category) {
    return items.get(category).get();
  }
}
