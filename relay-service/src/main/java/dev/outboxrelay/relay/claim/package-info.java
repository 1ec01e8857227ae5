/**
 * The claim loop: claim as many jobs as there are free workers (never more: no in-memory queue that
 * could overflow or hold leased jobs idle), deliver each on a worker, then record the outcome with
 * a token-checked update. An empty claim waits a bounded, growing interval. No database transaction
 * is open while a sink is called.
 */
package dev.outboxrelay.relay.claim;
