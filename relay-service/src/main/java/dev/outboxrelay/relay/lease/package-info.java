/**
 * Leases: a claim owns a job until {@code lease_until} (database clock). {@link LeaseHeartbeat}
 * extends every claim a source holds every lease/3 in one token-checked statement, from the claim
 * until its outcome is recorded; a claim it does not get back is owned by someone else. {@link
 * LeaseReaper} returns expired leases to ready with the token cleared, safe with many relays
 * (locked rows are skipped, updates are token-checked).
 */
package dev.outboxrelay.relay.lease;
