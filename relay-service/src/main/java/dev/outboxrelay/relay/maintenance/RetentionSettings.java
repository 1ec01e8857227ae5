package dev.outboxrelay.relay.maintenance;

import static dev.outboxrelay.relay.config.ConfigChecks.positive;

import dev.outboxrelay.relay.config.RelayConfig;
import java.time.Duration;

/** The validated retention settings; validation names the bad key and the relay does not start. */
public record RetentionSettings(
    boolean enabled, Duration keep, Duration interval, int batchSize, int maxPerPass) {
  /**
   * Largest batch: SQL Server escalates a statement's row locks to a table lock past about 5,000,
   * which would block every claim (docs/databases.md).
   */
  public static final int MAX_BATCH_SIZE = 5000;

  public static RetentionSettings fromConfig(RelayConfig config) {
    RelayConfig.Retention r = config.retention();
    return of(r.enabled(), r.keep(), r.interval(), r.batchSize(), r.maxPerPass());
  }

  public static RetentionSettings of(
      boolean enabled, Duration keep, Duration interval, int batchSize, int maxPerPass) {
    positive("outbox.retention.keep", keep);
    positive("outbox.retention.interval", interval);
    if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
      throw new IllegalArgumentException(
          "outbox.retention.batch-size must be between 1 and "
              + MAX_BATCH_SIZE
              + " (small batches keep row locks short), was "
              + batchSize);
    }
    if (maxPerPass < batchSize) {
      throw new IllegalArgumentException(
          "outbox.retention.max-per-pass ("
              + maxPerPass
              + ") must be at least outbox.retention.batch-size ("
              + batchSize
              + ")");
    }
    return new RetentionSettings(enabled, keep, interval, batchSize, maxPerPass);
  }
}
