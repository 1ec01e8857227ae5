package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedJob;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Delivers claimed jobs to one destination.
 *
 * <p>Contract: called from several relay threads at once, never inside a database transaction.
 * Returns at once with a stage that completes with the sink's answer: no relay thread waits for the
 * network (a client that must block does it on a thread of the sink's own). Must send the operation
 * ID as the idempotency key. Expected failures (refused connection, timeout, error status) are
 * answers, not exceptions: {@link SinkResult.RetryLater} or {@link SinkResult.PermanentFailure}. A
 * thrown runtime exception or an exceptionally completed stage is treated as a retry. At shutdown
 * the relay stops waiting for stages still open after its grace period and releases their jobs
 * unsent and uncounted; a later answer is ignored.
 */
public interface MessageSink {
  CompletionStage<SinkResult> deliver(ClaimedJob message);

  /** An answer known at once (a sink that decided without the network). */
  static CompletionStage<SinkResult> answered(SinkResult result) {
    return CompletableFuture.completedFuture(result);
  }
}
