package dev.outboxrelay.outbox.store;

import java.time.Duration;
import java.util.Optional;

/**
 * Named locks held by one relay of a fleet at a time, leased on the database clock, so a crashed
 * holder's lock expires by itself. The scheduled jobs that must run once per database (retention,
 * reconciliation) take one for their pass. Thread-safe; each call runs in its own short
 * transaction.
 */
public interface FleetLock {
  /**
   * Takes the named lock for {@code leaseFor} when nobody holds it, its lease expired (a crashed
   * holder), or {@code owner} already holds it. False when another owner holds a live lease.
   */
  boolean acquire(String name, String owner, Duration leaseFor);

  /** Extends our own live lease; false when it expired or another owner took it. */
  boolean renew(String name, String owner, Duration leaseFor);

  /** Ends our lease now (no-op when another owner holds it). */
  void release(String name, String owner);

  /** Who holds the named lock, and until when; empty when it was never taken. */
  Optional<LockHolder> holder(String name);
}
