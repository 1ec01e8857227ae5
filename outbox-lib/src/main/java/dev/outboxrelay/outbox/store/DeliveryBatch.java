package dev.outboxrelay.outbox.store;

import java.util.List;
import java.util.Set;

/**
 * What a batched completion did: the ids it completed ({@code W → S}), and the jobs it claimed in
 * the same transaction for the same relay because a completion made them their key's head (the
 * key-affine hand-over, docs/design.md "Ordering keys"), in id order, each leased under the
 * hand-over's token.
 */
public record DeliveryBatch(Set<Long> completed, List<ClaimedJob> handedOver) {
  public DeliveryBatch {
    completed = Set.copyOf(completed);
    handedOver = List.copyOf(handedOver);
  }
}
