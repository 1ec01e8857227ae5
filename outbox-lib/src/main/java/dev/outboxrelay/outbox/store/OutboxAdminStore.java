package dev.outboxrelay.outbox.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The operator's and the gauges' view of the outbox: counts and ages by the database clock, jobs
 * and their attempts, and the operator's conditional actions (replay, cancel). Thread-safe; each
 * call runs in its own short transaction. The relay's transitions are {@link OutboxStore}.
 */
public interface OutboxAdminStore {

  /** Row counts per state ({@code R, W, S, C, D}); absent states count 0. */
  Map<Character, Long> countByState();

  /**
   * Age of the oldest undelivered job by the database clock: a ready, due job counts from its
   * {@code deliver_after}; a job already tried (in backoff or in flight again) from its first
   * attempt. Empty when no job is waiting.
   */
  Optional<Duration> oldestReadyAge();

  /**
   * Per destination with a waiting job, in one grouped statement: how many ready jobs are due and
   * the oldest undelivered job's age, as {@link #oldestReadyAge()} measures it (database clock).
   * Destinations in name order; a destination with nothing waiting is absent.
   */
  Map<String, DestinationBacklog> backlogByDestination();

  /** The database's current time. */
  Instant databaseNow();

  Optional<StoredJob> findJob(long id);

  Optional<StoredJob> findByOperationId(String operationId);

  List<StoredAttempt> attempts(long messageId);

  // ---- operator actions and inspection (admin API) -------------------------------------------

  /** One page of jobs in id order, without payloads. */
  List<JobSummary> listJobs(JobQuery query);

  /**
   * {@code D → R}: a full attempt budget again, due now. Conditional on the job being {@code D};
   * {@code false} when it is unknown or in another state (nothing changed).
   */
  boolean replayDead(long id);

  /**
   * {@code R → D} with {@code reason} as its last error, recorded as a {@code CANCELLED} attempt,
   * in one transaction. Conditional on the job being {@code R}; {@code false} when it is unknown or
   * in another state ({@code W}: in flight) and nothing changed.
   */
  boolean cancelReady(long id, String reason);

  /** Dead jobs the filter matches now. */
  long countDead(DeadJobFilter filter);

  /**
   * Replays up to {@code limit} dead jobs the filter matches, lowest ids first, each as by {@link
   * #replayDead(long)} (conditional on still being {@code D}); returns how many changed.
   */
  int replayDead(DeadJobFilter filter, int limit);

  /** Row counts per destination and state, destinations in name order; states absent count 0. */
  Map<String, Map<Character, Long>> countByDestinationAndState();

  /** Dead jobs per error class of their latest failure, the largest group first. */
  List<DeadJobCount> countDeadByErrorClass();

  /** Up to {@code limit} ordering keys with dead jobs, the one with the oldest dead job first. */
  List<DeadOrderingKey> deadOrderingKeys(int limit);
}
