package dev.outboxrelay.demo.sink;

/**
 * One delivery received by the sink.
 *
 * @param operationId the idempotency key
 * @param destination the sink route it was sent to
 * @param messageId the outbox row id ({@code X-Outbox-Message-Id}), or null
 * @param attempt the relay's attempt number ({@code X-Outbox-Attempt}), or null
 * @param payload the request body
 */
public record Delivery(
    String operationId, String destination, Long messageId, Long attempt, String payload) {}
