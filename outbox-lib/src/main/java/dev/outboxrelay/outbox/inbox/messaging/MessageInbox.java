package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InboxHandler;
import dev.outboxrelay.outbox.inbox.InboxHandlerException;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * Runs the inbox for broker messages: reads the delivery ({@link DeliveryReader}), receives it once
 * in a transaction that has committed when {@link CommittingInbox#receive} returns, and only then
 * acknowledges. A crash between the commit and the acknowledgement makes the broker redeliver: that
 * delivery is a repeat, acknowledged without running the handler.
 *
 * <p>Every failure is a nack with nothing recorded, the exception as the reason: bad input ({@code
 * InvalidDeliveryException}), a conflicting payload under an applied ID ({@code
 * InboxConflictException}), a handler failure ({@code InboxHandlerException}; {@code isTransient()}
 * for a retry later) or a database error. What the broker does with a nack is the channel's failure
 * strategy, given the reader's {@link DeliveryReader#nackMetadata} (docs/receiving.md "Kafka and
 * RabbitMQ: acknowledge after the commit").
 *
 * <pre>{@code
 * @Incoming("orders") @Blocking
 * public CompletionStage<Void> consume(Message<byte[]> m) { return inbox.consume(m); }
 * }</pre>
 */
public final class MessageInbox {
  private final CommittingInbox inbox;
  private final DeliveryReader reader;
  private final InboxHandler handler;

  /**
   * @param inbox receives and commits ({@code transactionalInbox::receive}, or {@link
   *     CommittingInbox#jdbc})
   * @param reader {@link KafkaDeliveries#reader} or {@link RabbitMqDeliveries#reader}
   * @param handler the effect, run once per operation ID in the inbox's transaction
   */
  public MessageInbox(CommittingInbox inbox, DeliveryReader reader, InboxHandler handler) {
    this.inbox = Objects.requireNonNull(inbox, "inbox");
    this.reader = Objects.requireNonNull(reader, "reader");
    this.handler = Objects.requireNonNull(handler, "handler");
  }

  /**
   * Receives {@code message} once, then acks it; or nacks it with the failure, nothing recorded.
   * Blocking (database work): call it on a worker thread ({@code @Blocking}).
   *
   * @return the ack's or nack's completion
   */
  public CompletionStage<Void> consume(Message<?> message) {
    try {
      InboxDelivery delivery = reader.read(message);
      inbox.receive(delivery, handler);
    } catch (RuntimeException e) {
      return message.nack(e, reader.nackMetadata(e));
    }
    return message.ack();
  }

  /**
   * True for a failure a later delivery of the same message can get past: the handler's {@code
   * TransientFailureException}, or the receiver's database failing ({@link OutboxStoreException}).
   * A conflict, bad input or any other handler exception would fail again.
   */
  public static boolean isRetryable(Throwable failure) {
    return failure instanceof OutboxStoreException
        || (failure instanceof InboxHandlerException h && h.isTransient());
  }
}
