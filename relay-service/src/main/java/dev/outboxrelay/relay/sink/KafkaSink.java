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
 * record; a nack (the producer gave the record up: its {@code delivery.timeout.ms} passed, or the
 * broker refused it) is a retry with the producer's reason.
 *
 * <p>The wait for the producer's verdict is never shorter than the time the producer may hold a
 * record ({@code max.block.ms} + {@code delivery.timeout.ms}, plus a margin): a relay that gave up
 * earlier would retry a record the producer then still wrote, and a broker outage would write
 * records twice. The destination's {@code request-timeout} can only make the wait longer.
 */
public final class KafkaSink implements MessageSink {
  /** The outgoing channel every Kafka destination publishes through. */
  public static final String CHANNEL = "outbox-kafka";

  private final String topic;
  private final ChannelPublisher publisher;

  /** Added to the producer's own bound: its verdict travels through the connector first. */
  static final Duration VERDICT_MARGIN = Duration.ofSeconds(3);

  /**
   * @param requestTimeout the destination's {@code request-timeout}
   * @param verdictWithin how long the producer may hold a record before it fails it for good
   */
  public KafkaSink(String topic, Duration requestTimeout, Duration verdictWithin, Consumer<Message<String>> channel) {
    this.topic = topic;
    this.publisher = new ChannelPublisher(channel, ackWait(requestTimeout, verdictWithin), "kafka " + topic,
        "KafkaAckTimeout");
  }

  /** The longer of the destination's request timeout and the producer's bound plus {@link #VERDICT_MARGIN}. */
  static Duration ackWait(Duration requestTimeout, Duration verdictWithin) {
    Duration producer = verdictWithin.plus(VERDICT_MARGIN);
    return requestTimeout.compareTo(producer) >= 0 ? requestTimeout : producer;
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
