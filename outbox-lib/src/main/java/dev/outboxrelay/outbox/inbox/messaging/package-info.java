/**
 * The inbox behind a SmallRye Reactive Messaging consumer (Kafka, RabbitMQ): {@link MessageInbox}
 * reads the operation ID from a broker message ({@link KafkaDeliveries}: the {@code operation-id}
 * header; {@link RabbitMqDeliveries}: the AMQP {@code message-id}), receives once in a transaction
 * that has committed when it returns, and only then acknowledges; a failure nacks with nothing
 * recorded.
 *
 * <p>The SmallRye, Kafka and RabbitMQ APIs are {@code provided} dependencies: a reader class loads
 * only in an application that has its connector. See docs/receiving.md "Wiring 2: Kafka" and
 * "Wiring 3: RabbitMQ".
 */
package dev.outboxrelay.outbox.inbox.messaging;
