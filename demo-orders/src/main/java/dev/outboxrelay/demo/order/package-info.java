/**
 * Orders: the business write of the demo. {@link OrderService} persists an {@link Order} with
 * Hibernate ORM and enqueues its billing job through {@link
 * dev.outboxrelay.outbox.orm.TransactionalOutbox} in the same JTA transaction and on the same
 * connection: both commit, or neither does. The job's operation ID, {@code order-<id>/billing}, is
 * what the sink deduplicates on and what the report matches.
 */
package dev.outboxrelay.demo.order;
