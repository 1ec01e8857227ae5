/**
 * The claim loop and the batched completion, each a background service run by a {@link
 * dev.outboxrelay.relay.background.ServiceRunner} (docs/design.md "Background services"): claim
 * what there is room for (the places free plus one batch ahead, a bounded number of claims held),
 * deliver each job without a thread waiting for its sink, then record the outcome with a
 * token-checked update (successes in batches). An empty claim waits a bounded, growing interval.
 * No database transaction is open while a sink is called.
 */
package dev.outboxrelay.relay.claim;
