package dev.outboxrelay.outbox.inbox;

import java.util.Optional;

/**
 * Settings of an {@link Inbox}.
 *
 * @param maxPayloadBytes a larger delivery is refused ({@link InvalidDeliveryException}, field
 *     {@code payload}) before anything is written
 * @param confirmationSource when present, every application also counts in the relay's {@code
 *     outbox_confirmation} table under this source name, in the same transaction (receiver and
 *     relay share a database; reconciliation {@code type=table}); empty: the inbox is the ledger
 * @param savepoint whether {@link Inbox#receive} takes a savepoint so that a failing handler leaves
 *     the caller's transaction usable; {@code TransactionalInbox} turns it off and rolls the JTA
 *     transaction back instead
 */
public record InboxConfig(
    int maxPayloadBytes, Optional<String> confirmationSource, boolean savepoint) {
  public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576;

  /** The longest operation ID or destination, as in the outbox tables. */
  public static final int MAX_ID_CHARS = 200;

  public InboxConfig {
    if (maxPayloadBytes < 1) {
      throw new IllegalArgumentException("maxPayloadBytes must be >= 1, was " + maxPayloadBytes);
    }
    confirmationSource = confirmationSource == null ? Optional.empty() : confirmationSource;
    confirmationSource.ifPresent(
        s -> {
          if (s.isBlank() || s.length() > MAX_ID_CHARS) {
            throw new IllegalArgumentException(
                "confirmationSource must be 1 to " + MAX_ID_CHARS + " characters, was '" + s + "'");
          }
        });
  }

  /** 1 MiB payloads, the inbox as the ledger, savepoints on. */
  public static InboxConfig defaults() {
    return new InboxConfig(DEFAULT_MAX_PAYLOAD_BYTES, Optional.empty(), true);
  }

  public InboxConfig withMaxPayloadBytes(int bytes) {
    return new InboxConfig(bytes, confirmationSource, savepoint);
  }

  public InboxConfig withConfirmationSource(String source) {
    return new InboxConfig(maxPayloadBytes, Optional.of(source), savepoint);
  }

  public InboxConfig withSavepoint(boolean on) {
    return new InboxConfig(maxPayloadBytes, confirmationSource, on);
  }
}
