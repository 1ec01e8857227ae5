package dev.outboxrelay.outbox.store;

import java.time.Duration;
import java.util.UUID;

/**
 * @param limit at most this many rows
 * @param leaseFor lease length, added to the database clock
 * @param token the new claim token stamped on every claimed row
 */
public record ClaimRequest(int limit, Duration leaseFor, UUID token) {
  public ClaimRequest {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive, was " + limit);
    }
    if (leaseFor.toMillis() <= 0) {
      throw new IllegalArgumentException("leaseFor must be positive, was " + leaseFor);
    }
  }

  public static ClaimRequest of(int limit, Duration leaseFor) {
    return new ClaimRequest(limit, leaseFor, UUID.randomUUID());
  }
}
