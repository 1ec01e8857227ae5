/**
 * The store ports and their JDBC implementations, one store per port (docs/design.md "Stores"):
 * {@link dev.outboxrelay.outbox.store.OutboxStore} for the relay's transitions ({@link
 * dev.outboxrelay.outbox.store.JdbcOutboxStore}), {@link
 * dev.outboxrelay.outbox.store.OutboxAdminStore} for the operator's and the gauges' reads and
 * actions, {@link dev.outboxrelay.outbox.store.ReconciliationStore} and {@link
 * dev.outboxrelay.outbox.store.FleetLock}; {@code JdbcEnqueueStore} (next to {@code Outbox}, the
 * layer above) inserts on the caller's connection. Each store takes its statements from the
 * dialect's statement sets ({@code store.dialect}), rendered for its outbox's names when it is
 * made, and runs them itself: the claim in the dialect's shape (one statement, or lock, claim and
 * read back), batches of (id, token) pairs as one statement or as a lock followed by an update, and
 * maps every row through {@code jdbc.Rows}.
 *
 * <p>Claim/lease model: {@link dev.outboxrelay.outbox.store.OutboxStore#claimBatch} moves up to
 * {@code limit} ready ({@code R}), due rows to {@code W} in one atomic statement, stamping a new
 * claim token and {@code lease_until = now + lease} from the database clock, and returns exactly
 * the rows it changed. Every later write by the claimer (renew, complete, fail, release) is
 * conditional on {@code id}, {@code claim_token} and {@code state = 'W'}; {@code false} means the
 * lease expired and another owner may hold the job: lost ownership, never success. The reaper
 * returns expired leases to {@code R} with the token cleared, so a stale owner can change nothing.
 *
 * <p>Transactions: claim, complete and reap run in their own short transactions on connections from
 * the store's {@link javax.sql.DataSource}; no transaction is held across a delivery. {@code
 * JdbcEnqueueStore.insert} (next to {@code Outbox}) alone runs on the caller's connection and
 * transaction.
 */
package dev.outboxrelay.outbox.store;
