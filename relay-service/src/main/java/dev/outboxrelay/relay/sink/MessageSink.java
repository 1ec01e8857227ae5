package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedMessage;

/**
 * Delivers claimed jobs to one destination.
 *
 * <p>Contract: called from several worker threads at once, never inside a database transaction.
 * Must send the operation ID as the idempotency key. Must not throw for expected failures
 * (refused connection, timeout, error status): return {@link SinkResult.RetryLater} or {@link
 * SinkResult.PermanentFailure}. A thrown runtime exception is treated as a retry. Must respond to
 * interruption (shutdown) by throwing {@link InterruptedException}; the job is then released.
 */
public interface MessageSink {
  SinkResult deliver(ClaimedMessage message) throws InterruptedException;
}
