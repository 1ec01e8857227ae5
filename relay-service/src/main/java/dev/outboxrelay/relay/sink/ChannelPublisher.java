package dev.outboxrelay.relay.sink;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Sends one message through a SmallRye channel and waits for the connector's acknowledgement,
 * which {@link KafkaSink} configures to mean "the broker has it" ({@code acks=all}).
 *
 * <p>Delivered only on the ack; a nack is a retry with the broker's reason; no ack within the
 * timeout is a retry too. After such a timeout the connector may still publish the message later,
 * so a retried job can reach the broker twice under the same operation ID (consumers deduplicate
 * on it, exactly as an HTTP sink does on {@code Idempotency-Key}); {@link KafkaSink} waits longer
 * than its producer may hold a record, so that this stays the exception.
 */
final class ChannelPublisher {
  private final Consumer<Message<String>> channel;
  private final Duration ackTimeout;
  /** Names the target in summaries and errors, e.g. {@code kafka orders.events}. */
  private final String target;
  private final String timeoutErrorClass;

  ChannelPublisher(Consumer<Message<String>> channel, Duration ackTimeout, String target,
      String timeoutErrorClass) {
    this.channel = channel;
    this.ackTimeout = ackTimeout;
    this.target = target;
    this.timeoutErrorClass = timeoutErrorClass;
  }

  SinkResult publish(String payload, Object connectorMetadata) throws InterruptedException {
    CompletableFuture<Void> acked = new CompletableFuture<>();
    Message<String> message = Message.of(payload, Metadata.of(connectorMetadata))
        .withAck(() -> {
          acked.complete(null);
          return CompletableFuture.completedFuture(null);
        })
        .withNack(failure -> {
          acked.completeExceptionally(failure);
          return CompletableFuture.completedFuture(null);
        });
    try {
      channel.accept(message);
      acked.get(ackTimeout.toMillis(), TimeUnit.MILLISECONDS);
      return new SinkResult.Delivered(target + " acknowledged");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      return new SinkResult.RetryLater(Optional.empty(), cause.getClass().getName(),
          target + " rejected the message: " + cause.getMessage(), null);
    } catch (TimeoutException e) {
      return new SinkResult.RetryLater(Optional.empty(), timeoutErrorClass,
          target + ": no acknowledgement within " + ackTimeout, null);
    } catch (RuntimeException e) {
      // The emitter refused the message (channel down or overflowing): nothing was sent.
      return new SinkResult.RetryLater(Optional.empty(), e.getClass().getName(),
          target + ": " + e.getMessage(), null);
    }
  }
}
