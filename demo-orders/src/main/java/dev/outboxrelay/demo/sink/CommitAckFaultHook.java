package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.messaging.KafkaDeliveries;
import io.smallrye.mutiny.Multi;
import io.smallrye.reactive.messaging.PublisherDecorator;
import io.smallrye.reactive.messaging.kafka.api.IncomingKafkaRecordMetadata;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.header.Header;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * <b>Test fault hook</b>, off unless the JVM is started with the system property {@value
 * #PROPERTY}{@code =k}: only the fault tests {@code BillingConsumersKafkaKillIT} and {@code
 * BillingConsumersRabbitMqKillIT} set it, on the command line of the receiver process they start.
 * It is no configuration key (no {@code application.properties} line, profile or environment
 * variable turns it on). When on, the k-th message this process's broker consumers acknowledge is
 * held back: {@link BillingConsumers} has committed its transaction and called {@code ack()}, but
 * the acknowledgement never reaches the connector; the consumer thread prints {@value #STALL_LINE}
 * with the operation ID and where the message came from, and waits for the test to SIGKILL the
 * process. The broker thus sees a consumer die exactly between a commit and its acknowledgement.
 *
 * <p>A {@link PublisherDecorator}, not an {@code IncomingInterceptor}: SmallRye binds only one
 * interceptor per channel, and the Quarkus tests have theirs ({@code AckWatch}). When off it leaves
 * every channel as it is.
 */
@ApplicationScoped
public class CommitAckFaultHook implements PublisherDecorator {
  /** The system property: the number of the acknowledgement to hold back, counted per process. */
  public static final String PROPERTY = "demo.test-fault.stall-before-ack";

  /** Printed when the acknowledgement is held back, before the operation ID. */
  public static final String STALL_LINE =
      "TEST-FAULT committed, not acknowledged, waiting for SIGKILL: ";

  private final int stallAt = Integer.getInteger(PROPERTY, 0);
  private final AtomicInteger acks = new AtomicInteger();

  /** Never counted down: the consumer thread waits on it until the process is killed. */
  private final CountDownLatch killed = new CountDownLatch(1);

  @Override
  public Multi<? extends Message<?>> decorate(
      Multi<? extends Message<?>> publisher, List<String> channels, boolean isConnector) {
    if (stallAt <= 0 || !isConnector) {
      return publisher;
    }
    return publisher.map(
        message ->
            message.withAckWithMetadata(
                metadata -> {
                  if (acks.incrementAndGet() == stallAt) {
                    stall(message);
                  }
                  return message.ack(metadata);
                }));
  }

  private void stall(Message<?> message) {
    System.out.println(STALL_LINE + origin(message));
    System.out.flush();
    try {
      killed.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "interrupted while holding back an acknowledgement for the fault test", e);
    }
  }

  /**
   * {@code <operation ID> <topic>-<partition>@<offset>} (Kafka) or {@code <operation ID> <routing
   * key>} (RabbitMQ).
   */
  private static String origin(Message<?> message) {
    String where =
        message
            .getMetadata(IncomingKafkaRecordMetadata.class)
            .map(k -> k.getTopic() + "-" + k.getPartition() + "@" + k.getOffset())
            .or(
                () ->
                    message
                        .getMetadata(IncomingRabbitMQMetadata.class)
                        .map(IncomingRabbitMQMetadata::getRoutingKey))
            .orElse("(unknown connector)");
    return operationId(message) + " " + where;
  }

  /**
   * The operation ID where the relay's sinks put it: the Kafka header {@code operation-id}, the
   * AMQP {@code message-id}; null when the message has none.
   */
  static String operationId(Message<?> message) {
    var kafka = message.getMetadata(IncomingKafkaRecordMetadata.class);
    if (kafka.isPresent()) {
      Header h = kafka.get().getHeaders().lastHeader(KafkaDeliveries.OPERATION_ID_HEADER);
      return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
    return message
        .getMetadata(IncomingRabbitMQMetadata.class)
        .flatMap(IncomingRabbitMQMetadata::getMessageId)
        .orElse(null);
  }
}
