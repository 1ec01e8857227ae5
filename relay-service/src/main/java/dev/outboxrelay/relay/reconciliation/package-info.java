/**
 * Reconciliation: compares what the relay sent with what each destination's external system
 * confirms it applied, and reports every difference (docs/design.md "Reconciliation").
 *
 * <p>Model. A {@link ConfirmationSource} per destination brings the sink's confirmations into
 * {@code outbox_confirmation} ({@code http-ledger} reads the sink's ledger; with {@code table}
 * consumers write it themselves). A run then classifies every job of each reconciled destination
 * created in its window, and every confirmation in the window that names no job, in the database:
 * matched ({@code S → C}), sent_unconfirmed (past the grace period), confirmed_not_sent,
 * duplicate_effects, dead; jobs not yet judged are pending. Each state move is a conditional update
 * that re-checks what the classification read, so a job a relay or an operator changed meanwhile is
 * left alone and reported as {@code changed_concurrently}.
 *
 * <p>One run at a time across the fleet: a run holds the {@code reconciliation} row of {@code
 * outbox_lock} (a lease by the database clock, taken by a conditional update; an expired lease of a
 * crashed relay is taken over). A scheduled run's window ends on a multiple of the interval, and
 * that window end is unique among runs, so each window is reconciled once by the schedule however
 * many relays run it.
 *
 * <p>{@link ReconciliationJob#reconcileOnce} is one pass; {@link ReconciliationService} adds the
 * lock, the schedule, the metrics and start-up validation; {@link ReconciliationResource} the REST
 * API.
 */
package dev.outboxrelay.relay.reconciliation;
