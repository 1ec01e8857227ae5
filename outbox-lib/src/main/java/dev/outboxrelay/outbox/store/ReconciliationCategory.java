package dev.outboxrelay.outbox.store;

import java.util.List;
import java.util.Locale;

/**
 * How reconciliation judges one job or confirmation of a window (docs/design.md "Reconciliation").
 * The wire name ({@link #wireName()}) is the lower-case name used in SQL, JSON and metric tags.
 */
public enum ReconciliationCategory {
  /** {@code S} or {@code C}, confirmed exactly once ({@code S} becomes {@code C}). */
  MATCHED,
  /** {@code S}, sent longer ago than the grace period, not confirmed: a possibly lost effect. */
  SENT_UNCONFIRMED,
  /** Confirmed once, but the job is {@code R}, {@code W}, {@code D} or unknown. */
  CONFIRMED_NOT_SENT,
  /** Confirmed more than once: the effect happened several times. */
  DUPLICATE_EFFECTS,
  /** {@code D}, not confirmed: the diagnosis is its last error. */
  DEAD,
  /** Not judged yet: ready or in flight, or sent within the grace period. Counted, not reported. */
  PENDING;

  /** The categories a report counts, in report order. */
  public static final List<ReconciliationCategory> REPORTED =
      List.of(MATCHED, SENT_UNCONFIRMED, CONFIRMED_NOT_SENT, DUPLICATE_EFFECTS, DEAD);

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static ReconciliationCategory fromWireName(String wire) {
    return valueOf(wire.toUpperCase(Locale.ROOT));
  }
}
