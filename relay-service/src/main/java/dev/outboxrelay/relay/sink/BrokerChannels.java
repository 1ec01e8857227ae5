package dev.outboxrelay.relay.sink;

import java.time.Duration;
import java.util.function.Consumer;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * What broker destinations publish through: Kafka destinations through the SmallRye Reactive
 * Messaging channel {@value KafkaSink#CHANNEL} (one producer, destinations pick the topic per
 * record), RabbitMQ destinations each on a channel of its own on the relay's one {@link
 * RabbitMqConnection}.
 *
 * @param kafkaVerdictWithin how long the Kafka producer may take to acknowledge a record or fail
 *     it for good ({@code max.block.ms} + {@code delivery.timeout.ms}): a Kafka delivery waits at
 *     least that long, so the relay never retries a record the producer still holds
 */
public record BrokerChannels(Consumer<Message<String>> kafka, Duration kafkaVerdictWithin,
    RabbitMqConnection rabbitmq) {

  /** For tests and tools without brokers: every broker delivery fails as a retry. */
  public static BrokerChannels none() {
    return new BrokerChannels(message -> {
      throw new IllegalStateException("no Kafka channel in this registry");
    }, Duration.ZERO, RabbitMqConnection.none());
  }
}
