package dev.outboxrelay.demo.order;

/**
 * A committed order and its billing job.
 *
 * @param id the order's id
 * @param operationId the billing job's operation ID
 * @param messageId the outbox row's id
 */
public record PlacedOrder(long id, String operationId, long messageId) {}
