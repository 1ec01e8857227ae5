package dev.outboxrelay.demo.sink;

import dev.outboxrelay.demo.DemoDatabase;
import io.smallrye.reactive.messaging.IncomingInterceptor;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Watches the acknowledgements of every broker channel (a SmallRye interceptor, in the test
 * application only): at each ack it counts the message's invoices on another connection, which sees
 * only committed rows, so an ack before the commit would show 0. For an operation ID given to
 * {@link #crashAfterCommit} the first ack does not happen: the consumer "dies" after the commit,
 * and the message is nacked for redelivery instead (a requeue on RabbitMQ, the delayed retry topic
 * on Kafka), as the broker redelivers an unacknowledged message after a crash.
 */
@ApplicationScoped
public class AckWatch implements IncomingInterceptor {
  private static final String EFFECTS = "SELECT COUNT(*) FROM demo_invoice WHERE operation_id = ?";

  @Inject DemoDatabase db;

  private final Set<String> crashOnce = ConcurrentHashMap.newKeySet();
  private final Set<String> crashed = ConcurrentHashMap.newKeySet();
  private final Map<String, List<Long>> effectsAtAck = new ConcurrentHashMap<>();

  void crashAfterCommit(String operationId) {
    crashOnce.add(operationId);
  }

  boolean crashed(String operationId) {
    return crashed.contains(operationId);
  }

  /** The invoices committed for {@code operationId} at each of its acks, in order. */
  List<Long> effectsAtAck(String operationId) {
    return effectsAtAck.getOrDefault(operationId, List.of());
  }

  @Override
  public Message<?> afterMessageReceive(Message<?> message) {
    String op = CommitAckFaultHook.operationId(message);
    if (op == null) {
      return message;
    }
    return message.withAck(
        () -> {
          long effects = db.jdbc().queryLong(EFFECTS, op);
          if (crashOnce.remove(op)) {
            crashed.add(op);
            return message.nack(
                new IllegalStateException(
                    "simulated crash between the commit and the ack of " + op),
                redeliver(message));
          }
          effectsAtAck.computeIfAbsent(op, k -> new CopyOnWriteArrayList<>()).add(effects);
          return message.ack();
        });
  }

  /**
   * RabbitMQ's reject strategy requeues only when asked; Kafka's delayed retry topic always
   * retries.
   */
  private static Metadata redeliver(Message<?> message) {
    return message.getMetadata(IncomingRabbitMQMetadata.class).isPresent()
        ? Metadata.of(new RabbitMQRejectMetadata(true))
        : Metadata.empty();
  }

  @Override
  public void onMessageAck(Message<?> message) {}

  @Override
  public void onMessageNack(Message<?> message, Throwable failure) {}
}
