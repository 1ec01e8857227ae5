package dev.outboxrelay.relay.console;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Deliveries in the last minute by source, destination and outcome, on this relay instance: the
 * {@code outbox_delivery_attempts_total} counters are sampled every few seconds, and the rate is
 * the difference between now and the sample about a minute old (or the oldest one, right after
 * start-up; {@link Window#seconds()} says how long the window really is).
 */
@ApplicationScoped
public class DeliveryRates {
  static final Duration WINDOW = Duration.ofSeconds(60);

  /** Counts per {@code source → destination → outcome} over {@code seconds}. */
  public record Window(double seconds, Map<String, Map<String, Map<String, Long>>> counts) {}

  private record Sample(Instant at, Map<String, Double> totals) {}

  @Inject MeterRegistry registry;

  private final Deque<Sample> samples = new ArrayDeque<>();

  @Scheduled(every = "5s", identity = "console-delivery-rates")
  void sample() {
    Sample now = new Sample(Instant.now(), totals());
    synchronized (samples) {
      samples.addLast(now);
      // Keep one sample at least a window old, drop the older ones.
      while (samples.size() > 2) {
        Sample second = samples.stream().skip(1).findFirst().orElseThrow();
        if (Duration.between(second.at(), now.at()).compareTo(WINDOW) >= 0) {
          samples.removeFirst();
        } else {
          break;
        }
      }
    }
  }

  /** The latest minute (or what has been seen of it) up to now. */
  public Window lastMinute() {
    Sample now = new Sample(Instant.now(), totals());
    Sample from;
    synchronized (samples) {
      from = samples.isEmpty() ? null : samples.peekFirst();
    }
    Map<String, Map<String, Map<String, Long>>> counts = new TreeMap<>();
    now.totals()
        .forEach(
            (key, total) -> {
              double before = from == null ? 0 : from.totals().getOrDefault(key, 0.0);
              String[] k = key.split("\u0000", 3);
              counts
                  .computeIfAbsent(k[0], s -> new TreeMap<>())
                  .computeIfAbsent(k[1], d -> new TreeMap<>())
                  .put(k[2], Math.round(total - before));
            });
    double seconds = from == null ? 0 : Duration.between(from.at(), now.at()).toMillis() / 1000.0;
    return new Window(seconds, counts);
  }

  private Map<String, Double> totals() {
    Map<String, Double> totals = new HashMap<>();
    for (Counter c : registry.find("outbox.delivery.attempts").counters()) {
      String key =
          tag(c, "source") + "\u0000" + tag(c, "destination") + "\u0000" + tag(c, "outcome");
      totals.merge(key, c.count(), Double::sum);
    }
    return totals;
  }

  private static String tag(Counter c, String name) {
    String v = c.getId().getTag(name);
    return v == null ? "" : v;
  }
}
