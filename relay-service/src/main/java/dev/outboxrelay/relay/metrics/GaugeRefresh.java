package dev.outboxrelay.relay.metrics;

import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.relay.background.BackgroundService;
import dev.outboxrelay.relay.background.Pass;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * One refresh of a source's gauges ({@code outbox_messages}, the oldest ready age, the
 * per-destination backlog) and of the database's clock skew, every {@code
 * outbox.relay.metrics-refresh-interval}. Not skipped while the source is DOWN: with delivery
 * disabled it is the call that notices the database is back.
 */
public final class GaugeRefresh implements BackgroundService {
  private final OutboxAdminStore store;
  private final RelayMetrics metrics;
  private final Consumer<Duration> clockSkew;

  /**
   * @param clockSkew told the database's clock minus this process's, at each refresh
   */
  public GaugeRefresh(OutboxAdminStore store, RelayMetrics metrics, Consumer<Duration> clockSkew) {
    this.store = store;
    this.metrics = metrics;
    this.clockSkew = clockSkew;
  }

  @Override
  public Pass runOnce() {
    metrics.messagesByState(store.countByState());
    metrics.oldestReadyAge(store.oldestReadyAge().orElse(Duration.ZERO));
    metrics.destinationBacklog(store.backlogByDestination());
    Instant before = Instant.now();
    Instant db = store.databaseNow();
    clockSkew.accept(Duration.between(before, db));
    return Pass.done(0);
  }
}
