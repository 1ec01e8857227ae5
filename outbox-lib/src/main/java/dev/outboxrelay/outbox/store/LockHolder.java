package dev.outboxrelay.outbox.store;

import java.time.Instant;

/** Who holds a fleet lock, and until when (database clock); {@code now} is the database's. */
public record LockHolder(String name, String owner, Instant leaseUntil, Instant now) {
  public boolean expired() {
    return leaseUntil.isBefore(now);
  }
}
