package dev.outboxrelay.relay.reconciliation;

import java.time.Instant;

/**
 * Where one destination's external system says which operation IDs it applied. A source brings its
 * confirmations into {@code outbox_confirmation}, where a run classifies them; a source whose
 * consumers write that table themselves has nothing to bring.
 */
public interface ConfirmationSource {

  /** {@code http-ledger} or {@code table}. */
  String type();

  /**
   * Writes every confirmation the source holds for operations applied after {@code since} (it may
   * write earlier ones too) into {@code outbox_confirmation}; returns how many. Throws {@link
   * ConfirmationSourceException} when the source cannot answer: the run then has no verdict.
   */
  int collect(Instant since);
}
