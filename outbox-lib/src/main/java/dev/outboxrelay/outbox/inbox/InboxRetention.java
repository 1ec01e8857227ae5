package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.InboxStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import javax.sql.DataSource;

/**
 * Deletes inbox rows applied longer ago than a horizon, in small batches, each in its own short
 * auto-committed statement (no long locks, no long undo). Call it outside any transaction (a JTA
 * datasource refuses auto-commit on an enlisted connection), e.g. from a scheduled method.
 *
 * <p>Choosing the horizon: a row may go once no redelivery of its ID can arrive any more. The relay
 * redelivers a job until it is sent or dead; the last redelivery of an ID can come at most {@code
 * max-attempts × backoff cap + lease} after its first delivery (every attempt waits at most the
 * cap, and a crashed relay's claim comes back after the lease). With the relay's defaults ({@code
 * outbox.relay.max-attempts=10}, {@code backoff.max-delay=5m}, {@code lease-duration=30s}) that is
 * 10 × 5 min + 30 s = 50.5 minutes (jitter never takes a wait past the cap). A receiver that
 * answers {@code Retry-After} stretches a wait up to what it asked for. Keep the rows much longer
 * than that ({@link #DEFAULT_HORIZON}, 7 days): an operator can also replay dead jobs by hand, and
 * a delivery replayed after its inbox row is gone is applied again.
 */
public final class InboxRetention {
  /** A week: far beyond the relay's redelivery horizon, and covers a replay of dead jobs. */
  public static final Duration DEFAULT_HORIZON = Duration.ofDays(7);

  public static final int DEFAULT_BATCH_SIZE = 500;

  private final DataSource dataSource;
  private final Duration horizon;
  private final int batchSize;
  private final Clock clock;

  public InboxRetention(DataSource dataSource, Duration horizon, int batchSize) {
    this(dataSource, horizon, batchSize, Clock.systemUTC());
  }

  public InboxRetention(DataSource dataSource, Duration horizon, int batchSize, Clock clock) {
    if (horizon == null || horizon.isNegative() || horizon.isZero()) {
      throw new IllegalArgumentException("horizon must be positive, was " + horizon);
    }
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be >= 1, was " + batchSize);
    }
    this.dataSource = dataSource;
    this.horizon = horizon;
    this.batchSize = batchSize;
    this.clock = clock;
  }

  /**
   * Deletes rows applied before now minus the horizon, {@code batchSize} per transaction, until
   * none is left or {@code maxBatches} ran; returns the number deleted.
   */
  public long purge(int maxBatches) {
    Instant cutoff = clock.instant().minus(horizon);
    long deleted = 0;
    for (int i = 0; i < maxBatches; i++) {
      int n = deleteBatch(cutoff);
      deleted += n;
      if (n < batchSize) {
        break;
      }
    }
    return deleted;
  }

  /** One batch: at most {@code batchSize} rows applied before {@code cutoff}, committed. */
  public int deleteBatch(Instant cutoff) {
    try (Connection c = dataSource.getConnection()) {
      InboxStatements d =
          DialectDetector.forProductName(c.getMetaData().getDatabaseProductName()).inbox();
      boolean auto = c.getAutoCommit();
      c.setAutoCommit(true);
      BoundSql delete = d.deleteBatch(cutoff, batchSize);
      try (PreparedStatement ps = c.prepareStatement(delete.sql())) {
        d.dialect().binding().bindAll(ps, delete.params());
        return ps.executeUpdate();
      } finally {
        c.setAutoCommit(auto);
      }
    } catch (SQLException e) {
      throw new OutboxStoreException(
          "inbox retention: deleting rows before " + cutoff + " failed: " + e.getMessage(), e);
    }
  }
}
