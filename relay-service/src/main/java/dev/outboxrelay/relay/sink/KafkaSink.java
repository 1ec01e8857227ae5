package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Publishes a job as one Kafka record with the relay's producer ({@link KafkaChannel}: idempotent,
 * {@code acks=all}): topic per destination, key = the ordering key or else the operation ID,
 * headers {@code operation-id}, {@code outbox-message-id}, {@code outbox-attempt}, {@code
 * content-type} plus the job's own. Delivered only when the broker acknowledged the record; a
 * failed send (the producer gave the record up: its {@code delivery.timeout.ms} passed, or the
 * broker refused it) is a retry with the producer's reason, and a record too large or an invalid
 * topic is permanent.
 *
 * <p>The wait for the producer's verdict is never shorter than the time the producer may hold a
 * record ({@code max.block.ms} + {@code delivery.timeout.ms}, plus {@link #VERDICT_MARGIN}): a
 * relay that gave up earlier would retry a record the producer then still wrote, and a broker
 * outage would write records twice. The destination's {@code request-timeout} can only make the
 * wait longer.
 */
public final class KafkaSink implements MessageSink {
  /** The name under which the producer's settings are ({@code mp.messaging.outgoing.outbox-kafka.*}). */
  public static final String CHANNEL = "outbox-kafka";
  /** Added to the producer's own bound: a guard, the producer answers first. */
  static final Duration VERDICT_MARGIN = Duration.ofSeconds(3);

  /** Sends a record; the relay's producer, or a stand-in without a broker. */
  @FunctionalInterface
  public interface Producer {
    Future<RecordMetadata> send(ProducerRecord<String, String> record);
  }

  private final String topic;
  private final Duration ackWait;
  private final Producer producer;

  /**
   * @param requestTimeout the destination's {@code request-timeout}
   * @param verdictWithin how long the producer may hold a record before it fails it for good
   */
  public KafkaSink(String topic, Duration requestTimeout, Duration verdictWithin, Producer producer) {
    this.topic = topic;
    this.ackWait = ackWait(requestTimeout, verdictWithin);
    this.producer = producer;
  }

  /** The longer of the destination's request timeout and the producer's bound plus {@link #VERDICT_MARGIN}. */
  static Duration ackWait(Duration requestTimeout, Duration verdictWithin) {
    Duration bound = verdictWithin.plus(VERDICT_MARGIN);
    return requestTimeout.compareTo(bound) >= 0 ? requestTimeout : bound;
  }

  @Override
  public SinkResult deliver(ClaimedMessage m) throws InterruptedException {
    RecordHeaders headers = new RecordHeaders();
    SinkHeaders.of(m).forEach((k, v) -> headers.add(k, v.getBytes(StandardCharsets.UTF_8)));
    String key = m.orderingKey() != null ? m.orderingKey() : m.operationId();
    String target = "kafka " + topic;
    try {
      Future<RecordMetadata> sent = producer.send(new ProducerRecord<>(topic, null, key, m.payload(), headers));
      RecordMetadata r = sent.get(ackWait.toMillis(), TimeUnit.MILLISECONDS);
      return new SinkResult.Delivered(target + " acknowledged, partition " + r.partition() + " offset " + r.offset());
    } catch (ExecutionException e) {
      return failed(target, e.getCause() == null ? e : e.getCause());
    } catch (TimeoutException e) {
      return new SinkResult.RetryLater(Optional.empty(), "KafkaAckTimeout",
          target + ": no verdict from the producer within " + ackWait, null);
    } catch (RuntimeException e) {
      // send() itself refused: no metadata within max.block.ms, a closed producer, a bad record.
      return failed(target, e);
    }
  }

  private static SinkResult failed(String target, Throwable cause) {
    String error = target + " rejected the record: " + cause.getMessage();
    if (cause instanceof RecordTooLargeException || cause instanceof InvalidTopicException) {
      return new SinkResult.PermanentFailure(cause.getClass().getName(), error, null);
    }
    return new SinkResult.RetryLater(Optional.empty(), cause.getClass().getName(), error, null);
  }
}
