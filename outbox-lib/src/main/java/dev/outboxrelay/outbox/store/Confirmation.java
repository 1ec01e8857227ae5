package dev.outboxrelay.outbox.store;

import java.time.Instant;
import java.util.Objects;

/**
 * The external system's word that it applied an operation: from an HTTP ledger or written into
 * {@code outbox_confirmation} by a consumer.
 *
 * @param confirmedAt when the sink applied it (the sink's clock)
 * @param appliedCount how many times it applied the effect: 1, unless deduplication failed
 * @param source where the confirmation came from, e.g. {@code http-ledger}
 */
public record Confirmation(
    String operationId, String destination, Instant confirmedAt, int appliedCount, String source) {
  public Confirmation {
    Objects.requireNonNull(operationId, "operationId");
    Objects.requireNonNull(destination, "destination");
    Objects.requireNonNull(confirmedAt, "confirmedAt");
    Objects.requireNonNull(source, "source");
    if (appliedCount < 1) {
      throw new IllegalArgumentException(
          "appliedCount must be >= 1 for operation " + operationId + ", was " + appliedCount);
    }
  }
}
