package dev.outboxrelay.relay.sink;

import java.time.Duration;

/**
 * What broker destinations publish through: Kafka destinations through the relay's one producer
 * ({@link KafkaChannel}; destinations pick the topic per record), RabbitMQ destinations each on a
 * channel of its own on the relay's one {@link RabbitMqConnection}.
 *
 * @param kafkaVerdictWithin how long the Kafka producer may take to acknowledge a record or fail it
 *     for good ({@code max.block.ms} + {@code delivery.timeout.ms}): a Kafka delivery waits at
 *     least that long, so the relay never retries a record the producer still holds
 */
public record BrokerChannels(
    KafkaSink.Producer kafka, Duration kafkaVerdictWithin, RabbitMqConnection rabbitmq) {

  /** For tests and tools without brokers: every broker delivery fails as a retry. */
  public static BrokerChannels none() {
    return new BrokerChannels(
        (record, callback) -> {
          throw new IllegalStateException("no Kafka producer in this registry");
        },
        Duration.ZERO,
        RabbitMqConnection.none());
  }
}
