package io.smallrye.reactive.messaging.rabbitmq;

import com.rabbitmq.client.BasicProperties;
import com.rabbitmq.client.Envelope;

/**
 * The connector's own incoming metadata for a delivery read with the RabbitMQ client: its
 * constructor from the client's properties and envelope is package-private, hence this class in the
 * connector's package (tests only).
 */
public final class IncomingRabbitMqDeliveries {
  private IncomingRabbitMqDeliveries() {}

  public static IncomingRabbitMQMetadata metadata(BasicProperties properties, Envelope envelope) {
    return new IncomingRabbitMQMetadata(properties, envelope);
  }
}
