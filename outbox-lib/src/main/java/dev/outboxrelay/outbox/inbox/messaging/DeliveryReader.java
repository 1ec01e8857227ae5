package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import org.eclipse.microprofile.reactive.messaging.Message;

/** Turns one broker message into the delivery the inbox receives. */
@FunctionalInterface
public interface DeliveryReader {
  /**
   * The delivery carried by {@code message}.
   *
   * @throws InvalidDeliveryException naming the header or property that is missing or malformed
   */
  InboxDelivery read(Message<?> message);
}
