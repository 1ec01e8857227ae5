package dev.outboxrelay.relay.sink;

import dev.outboxrelay.outbox.store.ClaimedJob;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.ProducerRecord;
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
 * <p>The answer comes from the producer's send callback: no thread waits per record, so many
 * records are in flight and the producer batches them ({@code linger.ms}, {@code batch.size}).
 * {@code send} itself may block (up to {@code max.block.ms}, for metadata or buffer space), so it
 * runs on this destination's own send thread, never on a relay worker.
 *
 * <p>The wait for the producer's verdict is never shorter than the time the producer may hold a
 * record ({@code max.block.ms} + {@code delivery.timeout.ms}, plus {@link #VERDICT_MARGIN}),
 * counted from the call to {@code send}: a relay that gave up earlier would retry a record the
 * producer then still wrote, and a broker outage would write records twice. The destination's
 * {@code request-timeout} can only make the wait longer.
 */
public final class KafkaSink implements MessageSink {
  /**
   * The name under which the producer's settings are ({@code
   * mp.messaging.outgoing.outbox-kafka.*}).
   */
  public static final String CHANNEL = "outbox-kafka";

  /** Added to the producer's own bound: a guard, the producer answers first. */
  static final Duration VERDICT_MARGIN = Duration.ofSeconds(3);

  /**
   * Sends a record and calls {@code callback} with its verdict; the relay's producer, or a
   * stand-in.
   */
  @FunctionalInterface
  public interface Producer {
    void send(ProducerRecord<String, String> record, Callback callback);
  }

  private final String topic;
  private final Duration ackWait;
  private final Producer producer;

  /**
   * Calls {@code send} one record after the other, so a blocked send holds up only this
   * destination.
   */
  private final ExecutorService sendThread;

  /**
   * @param requestTimeout the destination's {@code request-timeout}
   * @param verdictWithin how long the producer may hold a record before it fails it for good
   */
  public KafkaSink(
      String topic, Duration requestTimeout, Duration verdictWithin, Producer producer) {
    this.topic = topic;
    this.ackWait = ackWait(requestTimeout, verdictWithin);
    this.producer = producer;
    this.sendThread = SendThread.named("outbox-kafka-send-" + topic);
  }

  /**
   * The longer of the destination's request timeout and the producer's bound plus {@link
   * #VERDICT_MARGIN}.
   */
  static Duration ackWait(Duration requestTimeout, Duration verdictWithin) {
    Duration bound = verdictWithin.plus(VERDICT_MARGIN);
    return requestTimeout.compareTo(bound) >= 0 ? requestTimeout : bound;
  }

  @Override
  public CompletionStage<SinkResult> deliver(ClaimedJob m) {
    RecordHeaders headers = new RecordHeaders();
    SinkHeaders.of(m).forEach((k, v) -> headers.add(k, v.getBytes(StandardCharsets.UTF_8)));
    String key = m.orderingKey() != null ? m.orderingKey() : m.operationId();
    String target = "kafka " + topic;
    ProducerRecord<String, String> record =
        new ProducerRecord<>(topic, null, key, m.payload(), headers);
    CompletableFuture<SinkResult> answer = new CompletableFuture<>();
    sendThread.execute(
        () -> {
          try {
            producer.send(
                record,
                (r, e) ->
                    answer.complete(
                        e == null
                            ? new SinkResult.Delivered(
                                target
                                    + " acknowledged, partition "
                                    + r.partition()
                                    + " offset "
                                    + r.offset())
                            : failed(target, e)));
          } catch (RuntimeException e) {
            // send() itself refused: no metadata within max.block.ms, a closed producer, a bad
            // record.
            answer.complete(failed(target, e));
            return;
          }
          answer.completeOnTimeout(
              new SinkResult.RetryLater(
                  Optional.empty(),
                  "KafkaAckTimeout",
                  target + ": no verdict from the producer within " + ackWait,
                  null),
              ackWait.toMillis(),
              TimeUnit.MILLISECONDS);
        });
    return answer;
  }

  private static SinkResult failed(String target, Throwable cause) {
    String error = target + " rejected the record: " + cause.getMessage();
    if (cause instanceof RecordTooLargeException || cause instanceof InvalidTopicException) {
      return new SinkResult.PermanentFailure(cause.getClass().getName(), error, null);
    }
    return new SinkResult.RetryLater(Optional.empty(), cause.getClass().getName(), error, null);
  }
}
