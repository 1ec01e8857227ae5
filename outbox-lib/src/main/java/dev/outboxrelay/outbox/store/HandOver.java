package dev.outboxrelay.outbox.store;

import java.util.Objects;
import java.util.Set;

/**
 * The key-affine hand-over a batched completion runs in its own transaction ({@link
 * OutboxStore#markDeliveredAll(java.util.List, HandOver)}): for each of {@code keys} whose job it
 * completes, the key's run (its new head and the ready, due jobs right behind it, up to the first
 * job that is not) is claimed under {@code claim}'s token and lease, at most {@code claim.limit()}
 * jobs in all, shared evenly among the keys (docs/design.md "Ordering keys").
 *
 * @param claim token, lease and the most jobs to claim
 * @param keys the keys to hand over; the batch's other keys only get their next head promoted
 */
public record HandOver(ClaimRequest claim, Set<String> keys) {
  public HandOver {
    Objects.requireNonNull(claim, "claim");
    keys = Set.copyOf(keys);
  }
}
