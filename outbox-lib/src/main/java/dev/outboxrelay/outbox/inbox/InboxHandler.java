package dev.outboxrelay.outbox.inbox;

import java.sql.Connection;

/**
 * The receiver's effect, run once per operation ID on the inbox's connection (the caller's
 * transaction). Throw {@link TransientFailureException} for a failure worth a retry later (a
 * dependency down); any other exception is a permanent refusal of this delivery. Either way the
 * inbox records nothing.
 */
@FunctionalInterface
public interface InboxHandler {
  /**
   * Applies the delivery; must not commit, roll back or change auto-commit.
   *
   * @return the outcome to answer later repeats with (e.g. the id of the row it created), at most
   *     {@value Inbox#MAX_OUTCOME_CHARS} characters, or null
   */
  String apply(Connection connection, InboxDelivery delivery) throws Exception;
}
