package dev.outboxrelay.outbox.store;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.IntFunction;

/**
 * The relay's view of the outbox table: claim, lease, complete, fail, release, reap, retention, and
 * the out-of-band body of a job it sends. Thread-safe; each call runs in its own short transaction.
 * Token-checked calls return {@code false} when the row is no longer {@code W} with that token:
 * ownership was lost, the caller must not treat it as success. What operators and gauges read is
 * {@link OutboxAdminStore}; the caller's enqueue is {@code JdbcEnqueueStore} (next to {@code
 * Outbox}, the layer above).
 */
public interface OutboxStore {

  /** Moves up to {@code limit} ready, due rows to {@code W}; returns exactly those rows, by id. */
  List<ClaimedJob> claimBatch(ClaimRequest request);

  /** Extends the lease to database now + {@code leaseFor}. */
  boolean renewLease(long id, UUID token, Duration leaseFor);

  /**
   * The batched heartbeat: extends to database now + {@code leaseFor} the lease of every claim of
   * {@code claims} (id → claim token) whose row is still {@code W} with that token, in one short
   * transaction, and returns their ids. A claim not returned is lost: another relay may own it.
   */
  Set<Long> renewLeases(Map<Long, UUID> claims, Duration leaseFor);

  /**
   * Of {@code claims}, the ids that hold an attempt with {@code outcome} recorded under that very
   * claim's token: read back after a transition that got no answer (the connection broke at commit,
   * the process froze), whether it committed, before running it again. One statement per {@link
   * dev.outboxrelay.outbox.store.dialect.Dialect#maxCompletionPairs()} claims.
   */
  Set<Long> recordedUnder(List<ClaimedJob> claims, AttemptOutcome outcome);

  /** {@code W → S}; records the attempt ({@code STALE} if ownership was lost). */
  boolean markDelivered(ClaimedJob message, AttemptRecord attempt);

  /**
   * {@link #markDelivered} for many jobs in one short transaction: the jobs whose rows still hold
   * their claim token go {@code W → S} (in one statement per {@link
   * dev.outboxrelay.outbox.store.dialect.Dialect#maxCompletionPairs()} jobs), the others change
   * nothing; every job gets its attempt row ({@code DELIVERED}, or {@code STALE} when its claim was
   * lost) in the same transaction. Returns the ids completed. On an exception nothing was
   * committed: the jobs stay leased, and a retry completes each at most once.
   */
  Set<Long> markDeliveredAll(List<DeliveredJob> jobs);

  /**
   * {@link #markDeliveredAll(List)}, and in the same transaction the key-affine hand-over: for each
   * key of {@code handOver.keys()} that these completions gave a new head, the head and the ready,
   * due jobs right behind it (its run, up to the first job of the key that is not ready and due)
   * are claimed as by {@link #claimBatch}, under the hand-over's token and lease, at most {@code
   * handOver.claim().limit()} in all, and returned with the completed ids in id order, so the relay
   * that held a key goes on with it at once. The relay must send a key's run one job after the
   * other. {@code handOver} null: none (no room). Default: no hand-over.
   */
  default DeliveryBatch markDeliveredAll(List<DeliveredJob> jobs, HandOver handOver) {
    return new DeliveryBatch(markDeliveredAll(jobs), List.of());
  }

  /** {@code W → R} with {@code deliver_after = now + retryAfter}; records the attempt. */
  boolean markForRetry(ClaimedJob message, Duration retryAfter, AttemptRecord attempt);

  /** {@code W → D} with the error as diagnosis; records the attempt. */
  boolean markDead(ClaimedJob message, AttemptRecord attempt);

  /** {@code W → R} without counting an attempt (shutdown: the job was never sent). */
  boolean release(long id, UUID token);

  /**
   * Returns up to {@code limit} rows whose lease expired to {@code R} (token cleared, attempts +
   * 1), due again at once, or to {@code D} when that reaches {@code maxAttempts}; records a {@code
   * LEASE_EXPIRED} attempt.
   */
  default ReapResult releaseExpiredLeases(int maxAttempts, int limit) {
    return releaseExpiredLeases(maxAttempts, limit, attempt -> Duration.ZERO);
  }

  /**
   * {@link #releaseExpiredLeases(int, int)}, each row returned to {@code R} due after {@code
   * retryDelay} of the attempt that expired (its number, from 1), as after a failed attempt.
   */
  ReapResult releaseExpiredLeases(int maxAttempts, int limit, IntFunction<Duration> retryDelay);

  /**
   * Retention: deletes up to {@code limit} finished jobs, {@code S} sent longer than {@code keep}
   * ago and {@code C} confirmed longer ago (database clock), with their attempts and out-of-band
   * bodies; never {@code R}, {@code W} or {@code D}. One short transaction of its own; rows another
   * transaction holds are skipped where the database can. Returns how many jobs it deleted: fewer
   * than {@code limit} means none (or only locked ones) are left.
   */
  int deleteFinishedBefore(Duration keep, int limit);

  /**
   * The out-of-band body of a by-reference job ({@link ClaimedJob#payloadByReference}), read by id
   * in one statement; empty when there is no body row. Does not verify it: see {@link
   * StoredPayload#mismatch}. Throws {@link dev.outboxrelay.outbox.error.OutboxStoreException} on a
   * database error.
   */
  Optional<StoredPayload> findPayload(long messageId);
}
