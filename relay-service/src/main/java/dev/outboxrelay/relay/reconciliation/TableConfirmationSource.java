package dev.outboxrelay.relay.reconciliation;

import java.time.Instant;

/**
 * Confirmations written into {@code outbox_confirmation} by external consumers (or a consumer of a
 * confirmation channel, e.g. a Kafka topic of applied operation IDs): nothing to bring in.
 */
final class TableConfirmationSource implements ConfirmationSource {
  @Override
  public String type() {
    return ReconciliationSettings.TABLE;
  }

  @Override
  public int collect(Instant since) {
    return 0;
  }
}
