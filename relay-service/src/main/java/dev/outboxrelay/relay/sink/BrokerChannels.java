package dev.outboxrelay.relay.sink;

import java.util.function.Consumer;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The SmallRye Reactive Messaging channels broker destinations publish through, one per broker
 * kind (the connector fixes the broker connection per channel; destinations pick the topic or
 * routing key per message).
 */
public record BrokerChannels(Consumer<Message<String>> kafka, Consumer<Message<String>> rabbitmq) {

  /** For tests and tools without brokers: every broker delivery fails as a retry. */
  public static BrokerChannels none() {
    return new BrokerChannels(missing("Kafka"), missing("RabbitMQ"));
  }

  private static Consumer<Message<String>> missing(String kind) {
    return message -> {
      throw new IllegalStateException("no " + kind + " channel in this registry");
    };
  }
}
