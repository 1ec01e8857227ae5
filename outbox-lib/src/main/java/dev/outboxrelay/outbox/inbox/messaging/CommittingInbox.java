package dev.outboxrelay.outbox.inbox.messaging;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.inbox.Inbox;
import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InboxHandler;
import dev.outboxrelay.outbox.inbox.InboxReceipt;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Receives once in a transaction of its own that has <b>committed when it returns</b>: the only
 * kind a broker consumer may acknowledge after. {@code TransactionalInbox::receive} is one when
 * called outside a transaction (never from a {@code @Transactional} method: the commit would come
 * after the acknowledgement); {@link #jdbc} is the plain-JDBC one.
 */
@FunctionalInterface
public interface CommittingInbox {
  /**
   * Receives {@code delivery} once and commits.
   *
   * @return the receipt of a committed transaction
   * @throws RuntimeException as {@link Inbox#receive}; the transaction was rolled back
   */
  InboxReceipt receive(InboxDelivery delivery, InboxHandler handler);

  /** One connection and one transaction from {@code dataSource} per delivery. */
  static CommittingInbox jdbc(DataSource dataSource, Inbox inbox) {
    return (delivery, handler) -> {
      inbox.validate(delivery);
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        try {
          InboxReceipt receipt = inbox.receive(c, delivery, handler);
          c.commit();
          return receipt;
        } catch (RuntimeException | SQLException e) {
          try {
            c.rollback();
          } catch (SQLException rollback) {
            e.addSuppressed(rollback);
          }
          throw e;
        }
      } catch (SQLException e) {
        throw new OutboxStoreException(
            "inbox transaction failed for operation ID '" + delivery.operationId() + "'", e);
      }
    };
  }
}
