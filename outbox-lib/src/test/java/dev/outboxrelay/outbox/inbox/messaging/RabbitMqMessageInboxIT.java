package dev.outboxrelay.outbox.inbox.messaging;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMqDeliveries;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link MessageInbox} with {@link RabbitMqDeliveries} on the RabbitMQ at 127.0.0.1:5672: messages
 * carry what the relay's RabbitMQ sink sets (AMQP {@code message-id} = operation ID, header {@code
 * outbox-message-id}), an ack is basic.ack, a nack basic.nack with requeue, a crash closes the
 * channel with the delivery unacknowledged (the broker requeues it). Queues are named {@code
 * h18-inbox-*}, one per test, deleted after it.
 */
class RabbitMqMessageInboxIT extends MessageInboxContractTest {
  private Connection connection;
  private Channel channel;
  private String queue;

  @BeforeEach
  void queue() throws Exception {
    ConnectionFactory f = new ConnectionFactory();
    f.setHost(System.getProperty("outbox.test.rabbitmq.host", "127.0.0.1"));
    f.setPort(Integer.getInteger("outbox.test.rabbitmq.port", 5672));
    connection = f.newConnection("inbox-it");
    channel = connection.createChannel();
    queue = "h18-inbox-" + UUID.randomUUID();
    channel.queueDeclare(queue, false, false, false, null);
  }

  @AfterEach
  void deleteQueue() throws Exception {
    try (Channel c = connection.createChannel()) {
      c.queueDelete(queue);
    }
    connection.close();
  }

  @Override
  String destination() {
    return "rabbitmq:inbox-it";
  }

  @Override
  DeliveryReader reader() {
    return RabbitMqDeliveries.reader(destination());
  }

  @Override
  String expectedIdField() {
    return RabbitMqDeliveries.MESSAGE_ID;
  }

  @Override
  void publish(String operationId, String payload, long jobId) throws IOException {
    Map<String, Object> headers = new LinkedHashMap<>();
    if (operationId != null) {
      headers.put("operation-id", operationId);
    }
    headers.put("outbox-message-id", Long.toString(jobId));
    AMQP.BasicProperties props =
        new AMQP.BasicProperties.Builder()
            .messageId(operationId)
            .contentType("application/json")
            .deliveryMode(2)
            .headers(headers)
            .build();
    channel.basicPublish("", queue, props, payload.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  Message<?> next() throws Exception {
    GetResponse r =
        Awaitility.await("a message on " + queue)
            .atMost(Duration.ofSeconds(30))
            .pollInSameThread()
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(10))
            .until(() -> channel.basicGet(queue, false), Objects::nonNull);
    long tag = r.getEnvelope().getDeliveryTag();
    Channel ch = channel;
    return wrap(
        r.getBody(),
        IncomingRabbitMqDeliveries.metadata(r.getProps(), r.getEnvelope()),
        () -> settle(() -> ch.basicAck(tag, false)),
        () -> settle(() -> ch.basicNack(tag, false, true)));
  }

  @Override
  void crashAndReconnect() throws Exception {
    channel.close(); // unacknowledged deliveries go back to the queue
    channel = connection.createChannel();
  }

  private interface BrokerCall {
    void run() throws IOException;
  }

  private static void settle(BrokerCall call) {
    try {
      call.run();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
