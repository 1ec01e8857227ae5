package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedMessage;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Publishes a job as one Kafka record through the SmallRye Reactive Messaging channel
 * {@value #CHANNEL} (idempotent producer, {@code acks=all}): topic per destination, key = the
 * ordering key or else the operation ID, headers {@code operation-id}, {@code outbox-message-id},
 * {@code outbox-attempt} plus the job's own. Delivered only when the broker acknowledged the
 * record (see {@link ChannelPublisher} for nacks, timeouts and what a retry may write twice).
 */
public final class KafkaSink implements MessageSink {
  /** The outgoing channel every Kafka destination publishes through. */
  public static final String CHANNEL = "outbox-kafka";

  private final String topic;
  private final ChannelPublisher publisher;

  public KafkaSink(String topic, Duration ackTimeout, Consumer<Message<String>> channel) {
    this.topic = topic;
    this.publisher = new ChannelPublisher(channel, ackTimeout, "kafka " + topic, "KafkaAckTimeout");
  }

  @Override
  public SinkResult deliver(ClaimedMessage m) throws InterruptedException {
    RecordHeaders headers = new RecordHeaders();
    SinkHeaders.of(m).forEach((k, v) -> headers.add(k, v.getBytes(StandardCharsets.UTF_8)));
    String key = m.orderingKey() != null ? m.orderingKey() : m.operationId();
    return publisher.publish(m.payload(), OutgoingKafkaRecordMetadata.<String>builder()
        .withTopic(topic).withKey(key).withHeaders(headers).build());
  }
}
