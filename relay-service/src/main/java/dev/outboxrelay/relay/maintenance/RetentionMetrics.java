package dev.outboxrelay.relay.maintenance;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Prometheus: {@code outbox_retention_deleted_total} (jobs this relay's passes deleted) and {@code
 * outbox_retention_last_run_age_seconds} (since the latest pass on any relay ended, read from the
 * {@code retention} lease at every tick, by the database clock; NaN until one is known).
 */
public class RetentionMetrics {
  private final Counter deleted;

  /** Age of the latest pass when read, and System.nanoTime() then; null before any is known. */
  private final AtomicReference<long[]> lastRun = new AtomicReference<>();

  public RetentionMetrics(MeterRegistry registry) {
    this(registry, "default");
  }

  /** The meters of source {@code source} (tag {@code source=<name>}). */
  public RetentionMetrics(MeterRegistry registry, String source) {
    deleted =
        Counter.builder("outbox.retention.deleted")
            .tag("source", source)
            .description("Finished jobs (S, C) deleted by retention on this relay")
            .register(registry);
    Gauge.builder(
            "outbox.retention.last.run.age.seconds", this, RetentionMetrics::lastRunAgeSeconds)
        .tag("source", source)
        .description(
            "Seconds since the latest retention pass on any relay ended (NaN: none known yet)")
        .register(registry);
  }

  public void deleted(int jobs) {
    deleted.increment(jobs);
  }

  /** The latest pass ended {@code age} ago (database clock); a negative age counts as 0. */
  public void lastRun(Duration age) {
    lastRun.set(new long[] {Math.max(0, age.toNanos()), System.nanoTime()});
  }

  public double deletedTotal() {
    return deleted.count();
  }

  public double lastRunAgeSeconds() {
    long[] read = lastRun.get();
    return read == null ? Double.NaN : (read[0] + (System.nanoTime() - read[1])) / 1e9;
  }
}
