/**
 * The demo sink: the "external system" the relay delivers billing jobs to, built on outbox-lib's
 * inbox ({@code dev.outboxrelay.outbox.inbox}). A delivery is received once per operation ID (the
 * {@code Idempotency-Key} header) in one transaction with its effect, a {@code demo_invoice} row; a
 * repeat is answered with the first outcome and only counted. The inbox's table is the ledger
 * ({@code GET /ledger}, the relay's {@code http-ledger} format). {@code demo_invoice.operation_id}
 * is deliberately not unique, so a dedup failure would show as {@code duplicateEffects}.
 *
 * <p>With {@code demo.sink.hmac-secret} set, each delivery's {@code X-Outbox-Signature} is checked
 * over the raw body first; a rejected delivery is answered 401 and touches no table.
 *
 * <p>{@link dev.outboxrelay.demo.sink.BillingConsumers} receives the same way from Kafka (the
 * {@code operation-id} header) and RabbitMQ (the AMQP {@code message-id}), acknowledging after the
 * commit; its channels exist only under the config profiles {@code kafka} and {@code rabbitmq}.
 *
 * <p>{@link dev.outboxrelay.demo.sink.CommitAckFaultHook} is a test fault hook, inert unless the
 * JVM gets its system property: the fault tests use it to kill a consumer between a commit and its
 * acknowledgement.
 */
package dev.outboxrelay.demo.sink;
