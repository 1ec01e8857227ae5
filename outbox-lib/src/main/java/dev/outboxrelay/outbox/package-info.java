/**
 * Public API of the transactional outbox.
 *
 * <p>An application appends an {@link OutboxMessage} with {@link Outbox#enqueue} on the <em>same
 * connection and transaction</em> as its business write: both commit or neither does. "Job
 * accepted" is not "effect done": the relay later claims the job, delivers it with its stable
 * operation ID as idempotency key, and records the outcome.
 *
 * <p>Job states: {@code R} ready, {@code W} working (claimed under a lease and a claim token),
 * {@code S} sent (the sink accepted it), {@code C} confirmed (reconciliation matched a sink
 * confirmation), {@code D} dead (permanent error, max attempts or operator cancel).
 */
package dev.outboxrelay.outbox;
