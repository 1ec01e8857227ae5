package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.jta.TransactionalInbox;
import dev.outboxrelay.outbox.inbox.messaging.KafkaDeliveries;
import dev.outboxrelay.outbox.inbox.messaging.MessageInbox;
import dev.outboxrelay.outbox.inbox.messaging.RabbitMqDeliveries;
import io.smallrye.reactive.messaging.annotations.Blocking;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.concurrent.CompletionStage;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The sink's broker consumers: the relay's Kafka deliveries (destination {@code billing-kafka},
 * deduplicated by the {@code operation-id} header) and RabbitMQ deliveries (destination {@code
 * billing-rabbitmq}, by the AMQP {@code message-id}), each received once into {@code demo_invoice}
 * and acknowledged after the commit. The channels are configured only under the config profiles
 * {@code kafka} and {@code rabbitmq} (application.properties), so the demo runs without a broker.
 * docs/receiving.md "Wiring 2: Kafka" shows this class as it is, from the marker line on.
 */
// docs:consumer
@ApplicationScoped
public class BillingConsumers {
  @Inject TransactionalInbox transactionalInbox;
  @Inject Invoices invoices;
  private MessageInbox kafka;
  private MessageInbox rabbitMq;

  @PostConstruct
  void init() {
    kafka =
        new MessageInbox(
            transactionalInbox::receive, // commits before it returns
            KafkaDeliveries.reader("billing-kafka"), // the relay's destination name
            invoices::apply); // the effect, once per operation ID
    rabbitMq =
        new MessageInbox(
            transactionalInbox::receive,
            RabbitMqDeliveries.reader("billing-rabbitmq"),
            invoices::apply);
  }

  @Incoming("billing-kafka")
  @Blocking // database work: a worker thread, in order
  public CompletionStage<Void> fromKafka(Message<byte[]> message) { // not @Transactional
    return kafka.consume(message);
  }

  @Incoming("billing-rabbitmq")
  @Blocking
  public CompletionStage<Void> fromRabbitMq(Message<byte[]> message) {
    return rabbitMq.consume(message);
  }
}
