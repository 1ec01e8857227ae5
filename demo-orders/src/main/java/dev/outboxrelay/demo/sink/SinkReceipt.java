package dev.outboxrelay.demo.sink;

/**
 * The sink's answer to a delivery.
 *
 * @param operationId the idempotency key
 * @param applied true when this delivery applied the effect; false for a repeat
 * @param deliveries deliveries of this operation ID so far, this one included
 */
public record SinkReceipt(String operationId, boolean applied, long deliveries) {}
