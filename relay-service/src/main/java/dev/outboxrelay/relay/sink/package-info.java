/**
 * Sinks deliver one claimed job and say what happened: {@link SinkResult.Delivered}, {@link
 * SinkResult.RetryLater} or {@link SinkResult.PermanentFailure}. Every delivery carries the job's
 * operation ID as idempotency key: deliveries may repeat, the receiver applies the effect once.
 */
package dev.outboxrelay.relay.sink;
