/**
 * Leases: a claim owns a job until {@code lease_until} (database clock). {@link
 * dev.outboxrelay.relay.lease.LeaseRenewer} extends it every lease/3 while a send runs; a renewal
 * that changes no row means another owner has the job. {@link
 * dev.outboxrelay.relay.lease.LeaseReaper} returns expired leases to ready with the token
 * cleared, safe with many relays (locked rows are skipped, updates are token-checked).
 */
package dev.outboxrelay.relay.lease;
