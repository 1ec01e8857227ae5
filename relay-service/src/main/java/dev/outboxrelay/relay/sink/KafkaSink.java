package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedMessage;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Publishes a job as one Kafka record through the SmallRye Reactive Messaging channel
 * {@value #CHANNEL} (idempotent producer, {@code acks=all}): topic per destination, key = the
 * ordering key or else the operation ID, headers {@code operation-id}, {@code outbox-message-id},
 * {@code outbox-attempt} plus the job's own. Delivered only when the broker acknowledged the
 * record; a nack (broker error) or no acknowledgement within the request timeout is a retry.
 * A retry after a timeout may write the record twice: consumers deduplicate on
 * {@code operation-id}.
 */
public final class KafkaSink implements MessageSink {
  /** The outgoing channel every Kafka destination publishes through. */
  public static final String CHANNEL = "outbox-kafka";

  private final String topic;
  private final Duration ackTimeout;
  private final Consumer<Message<String>> channel;

  public KafkaSink(String topic, Duration ackTimeout, Consumer<Message<String>> channel) {
    this.topic = topic;
    this.ackTimeout = ackTimeout;
    this.channel = channel;
  }

  @Override
  public SinkResult deliver(ClaimedMessage m) throws InterruptedException {
    RecordHeaders headers = new RecordHeaders();
    m.headers().forEach((k, v) -> headers.add(k, v.getBytes(StandardCharsets.UTF_8)));
    headers.add("operation-id", m.operationId().getBytes(StandardCharsets.UTF_8));
    headers.add("outbox-message-id", Long.toString(m.id()).getBytes(StandardCharsets.UTF_8));
    headers.add("outbox-attempt", Integer.toString(m.attemptNo()).getBytes(StandardCharsets.UTF_8));
    headers.add("content-type", m.contentType().getBytes(StandardCharsets.UTF_8));
    String key = m.orderingKey() != null ? m.orderingKey() : m.operationId();
    OutgoingKafkaRecordMetadata<String> metadata = OutgoingKafkaRecordMetadata.<String>builder()
        .withTopic(topic).withKey(key).withHeaders(headers).build();
    CompletableFuture<Void> acked = new CompletableFuture<>();
    Message<String> record = Message.of(m.payload(), Metadata.of(metadata))
        .withAck(() -> {
          acked.complete(null);
          return CompletableFuture.completedFuture(null);
        })
        .withNack(failure -> {
          acked.completeExceptionally(failure);
          return CompletableFuture.completedFuture(null);
        });
    try {
      channel.accept(record);
      acked.get(ackTimeout.toMillis(), TimeUnit.MILLISECONDS);
      return new SinkResult.Delivered("kafka " + topic + " acknowledged");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      return new SinkResult.RetryLater(Optional.empty(), cause.getClass().getName(),
          "kafka " + topic + " rejected the record: " + cause.getMessage(), null);
    } catch (TimeoutException e) {
      return new SinkResult.RetryLater(Optional.empty(), "KafkaAckTimeout",
          "kafka " + topic + ": no acknowledgement within " + ackTimeout, null);
    } catch (RuntimeException e) {
      // The emitter refused the message (channel down or overflowing): nothing was sent.
      return new SinkResult.RetryLater(Optional.empty(), e.getClass().getName(),
          "kafka " + topic + ": " + e.getMessage(), null);
    }
  }
}
