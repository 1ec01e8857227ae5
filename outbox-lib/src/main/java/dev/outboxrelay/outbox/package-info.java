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
 * confirmation), {@code D} dead (permanent error, max attempts or operator cancel): {@link
 * dev.outboxrelay.outbox.store.JobState}.
 *
 * <p>Layers, each depending only on the ones below it (no package cycle; {@code PackageCyclesTest}
 * fails on one): this facade ({@link Outbox}, {@link OutboxConfig}, and {@code JdbcEnqueueStore},
 * the enqueue it runs on the caller's connection) and the adapters {@code orm} and {@code inbox};
 * then {@code schema} (migrations) and {@code store} (the ports and their JDBC stores, {@code
 * JobState}); then {@code store.dialect} (the SQL and {@code OutboxTables}) and {@code jdbc}
 * (plumbing); at the bottom {@code error} ({@code OutboxException}, {@code OutboxStoreException}),
 * {@code trace} and {@code webhook}.
 */
package dev.outboxrelay.outbox;
