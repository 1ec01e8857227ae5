/**
 * The demo sink: the "external system" the relay delivers billing jobs to. It deduplicates on
 * the operation ID (the {@code Idempotency-Key} header), so a job delivered twice is applied
 * once.
 *
 * <p>Model: {@code demo_sink_ledger} holds one row per applied operation ID (the dedup record,
 * with a delivery counter); {@code demo_invoice} holds the business effect, one row per applied
 * delivery. Its operation_id is deliberately not unique, so a dedup failure would show as
 * {@code duplicateEffects} instead of being hidden by a constraint. A delivery runs in one
 * transaction: a repeat bumps the counter; a first delivery inserts the ledger row and the
 * invoice. When two first deliveries race, the ledger's primary key lets one insert win; the
 * loser rolls back and is retried in a new transaction, where it is a repeat.
 *
 * <p>{@code GET /ledger} exposes the applied operation IDs for reconciliation, in
 * {@code first_applied_at} order. Paging by that timestamp only sees committed rows: a
 * delivery that commits after a later-applied one was read is found by re-reading with an
 * earlier {@code since} (reconciliation reads with a grace period).
 *
 * <p>With {@code demo.sink.hmac-secret} set, {@link dev.outboxrelay.demo.sink.SinkSignatureVerifier}
 * checks each delivery's {@code X-Outbox-Signature} over the raw body before anything else; a
 * rejected delivery is answered 401 and touches no table.
 */
package dev.outboxrelay.demo.sink;
