package dev.outboxrelay.outbox.store;

/** What one delivery attempt ended in, as written to {@code outbox_attempt.outcome}. */
public enum AttemptOutcome {
  /** The sink accepted the job; the job is now {@code S}. */
  DELIVERED,
  /** Transient failure; the job went back to {@code R} with a backoff. */
  RETRY,
  /** Permanent failure or attempts exhausted; the job is now {@code D}. */
  DEAD,
  /** The owner vanished; the reaper returned the job after its lease expired. */
  LEASE_EXPIRED,
  /** The attempt finished after ownership was lost: its result changed nothing. */
  STALE,
  /**
   * An operator cancelled the ready job ({@code R → D}) before this attempt was made: no send
   * happened; the row records who cancelled it and when.
   */
  CANCELLED
}
