/**
 * Sinks deliver one claimed job and say what happened: {@link
 * dev.outboxrelay.relay.sink.SinkResult.Delivered}, {@link
 * dev.outboxrelay.relay.sink.SinkResult.RetryLater} or {@link
 * dev.outboxrelay.relay.sink.SinkResult.PermanentFailure}. Every delivery carries the job's
 * operation ID as idempotency key: deliveries may repeat, the receiver applies the effect once.
 */
package dev.outboxrelay.relay.sink;
