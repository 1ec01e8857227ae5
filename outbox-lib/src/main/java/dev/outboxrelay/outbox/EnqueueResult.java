package dev.outboxrelay.outbox;

/**
 * The outcome of an enqueue.
 *
 * @param messageId the job's row id
 * @param created {@code false} when an identical job with the same operation ID already existed
 *     (idempotent re-enqueue: nothing was written)
 */
public record EnqueueResult(long messageId, boolean created) {}
