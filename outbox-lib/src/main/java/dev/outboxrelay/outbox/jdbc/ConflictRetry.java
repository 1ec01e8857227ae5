package dev.outboxrelay.outbox.jdbc;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;

/**
 * Runs a unit of work again when the database rolled it back as a deadlock victim or a
 * serialization conflict (which errors those are is the dialect's {@code
 * ErrorCodes.isRetryableConflict}): the victim's transaction was undone whole, so nothing of the
 * failed run remains.
 */
public final class ConflictRetry {
  /**
   * How often a unit of work rolled back as a conflict is run again before the failure reaches the
   * caller.
   */
  public static final int RETRIES = 3;

  /** Pause before the first retry; doubled for each further one, plus jitter. */
  public static final Duration FIRST_PAUSE = Duration.ofMillis(5);

  private ConflictRetry() {}

  /** A unit of work that takes its own connection, so it can run again from the start. */
  @FunctionalInterface
  public interface Work<T> {
    T run() throws SQLException;
  }

  /**
   * Runs {@code work} and, while it fails with an error {@code retryable} accepts, runs it again,
   * at most {@link #RETRIES} more times. Any other failure, or the last conflict, goes to the
   * caller; so does the conflict when the thread is interrupted during the pause (interrupt status
   * kept).
   */
  public static <T> T run(Predicate<SQLException> retryable, Work<T> work) throws SQLException {
    for (int retry = 0; ; retry++) {
      try {
        return work.run();
      } catch (SQLException e) {
        if (retry >= RETRIES || !retryable.test(e)) {
          throw e;
        }
        pauseBeforeRetry(retry, e);
      }
    }
  }

  private static void pauseBeforeRetry(int retry, SQLException conflict) throws SQLException {
    long base = FIRST_PAUSE.toMillis() << retry;
    try {
      Thread.sleep(base + ThreadLocalRandom.current().nextLong(base + 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw conflict;
    }
  }
}
