package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

/** Turns one broker message into the delivery the inbox receives. */
@FunctionalInterface
public interface DeliveryReader {
  /**
   * The delivery carried by {@code message}.
   *
   * @throws InvalidDeliveryException naming the header or property that is missing or malformed
   */
  InboxDelivery read(Message<?> message);

  /**
   * The metadata {@link MessageInbox} nacks {@code failure} with, read by the channel's failure
   * strategy. None by default; {@link RabbitMqDeliveries} asks for a requeue of a {@linkplain
   * MessageInbox#isRetryable retryable} failure.
   */
  default Metadata nackMetadata(Throwable failure) {
    return Metadata.empty();
  }
}
