package dev.outboxrelay.demo.sink;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import java.nio.file.Path;
import java.util.Map;
import javax.sql.DataSource;

/**
 * {@link BillingConsumersKillContract} on RabbitMQ: the shared broker at 127.0.0.1:5672 with this
 * run's exchange and queues, the receiver under the config profile {@code rabbitmq}. The message
 * whose acknowledgement is held back stays unacknowledged on the receiver's channel; when the kill
 * drops the connection the broker puts it back in the queue, with every other message the receiver
 * had been sent and not acknowledged, and the next receiver gets them again.
 */
class BillingConsumersRabbitMqKillIT extends BillingConsumersKillContract {
  private BillingRabbitMq names;
  private Connection connection;
  private Channel channel;

  @Override
  String destination() {
    return "billing-rabbitmq";
  }

  @Override
  String configProfile() {
    return "rabbitmq";
  }

  @Override
  void startBroker(Path work) throws Exception {
    names = new BillingRabbitMq();
    connection = BillingRabbitMq.factory().newConnection();
    channel = connection.createChannel();
  }

  @Override
  Map<String, String> brokerSettings() {
    return names.settings();
  }

  @Override
  void awaitConsuming() {
    BillingRabbitMq.awaitConsumer(connection, names.queue(), PATIENCE);
  }

  @Override
  void publish(String operationId, String payload) throws Exception {
    BillingRabbitMq.publish(channel, names.exchange(), operationId, payload);
  }

  @Override
  void whileHeldBack(String where, DataSource db) {
    // AMQP shows a client no per-message state of another consumer: the redelivery of the held-back
    // message is checked at the end, as its second delivery in the inbox.
  }

  @Override
  boolean drained() throws Exception {
    return channel.queueDeclarePassive(names.queue()).getMessageCount() == 0;
  }

  @Override
  void stopBroker() throws Exception {
    if (connection != null) {
      connection.close();
    }
    if (names != null) {
      names.delete();
    }
  }
}
