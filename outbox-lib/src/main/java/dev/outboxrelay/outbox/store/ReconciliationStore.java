package dev.outboxrelay.outbox.store;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The reconciliation's view of the outbox: confirmations, the classification of a window, the
 * conditional state moves that follow from it, the runs and their reports. The fleet lock a run
 * holds is {@link FleetLock}. Thread-safe; each call runs in its own short transaction with the
 * database clock.
 *
 * <p>State moves never overwrite blindly: each re-checks the state and attempts the classification
 * read and returns {@code false} when the job changed in between (a relay re-delivered it, an
 * operator replayed it); the caller reports that, it is not an error.
 */
public interface ReconciliationStore {
  /** Lock name of the reconciliation job. */
  String RECONCILIATION_LOCK = "reconciliation";

  /**
   * Inserts or replaces confirmations (key: operation ID + destination), all in one transaction.
   */
  int upsertConfirmations(List<Confirmation> confirmations);

  /**
   * Classifies the jobs of {@code destination} created in {@code [start, end)} and that
   * destination's confirmations in the window that name no job. An {@code S} job counts as
   * unconfirmed only when sent longer than {@code gracePeriod} ago (database clock).
   */
  List<WindowEntry> classifyWindow(
      String destination, Instant start, Instant end, Duration gracePeriod);

  /** {@code S → C} with {@code confirmed_at}; false when the job is no longer as classified. */
  boolean confirmSent(WindowEntry entry);

  /** {@code S → R}, due now, same operation ID; false when changed or confirmed meanwhile. */
  boolean redrive(WindowEntry entry, String reason);

  /** {@code R}/{@code D} → {@code C} for a confirmed job; false when it changed meanwhile. */
  boolean acceptConfirmed(WindowEntry entry);

  /** Records a run's start; empty when its schedule slot is already taken by another run. */
  Optional<Long> startRun(RunStart start);

  /** True when a run exists for this schedule slot. */
  boolean scheduleSlotTaken(Instant slot);

  /**
   * Finishes a run with its counts and items (or an error and none), in one transaction: a report
   * is complete or absent. False when the run was already finished.
   */
  boolean finishRun(
      long runId,
      Map<ReconciliationCategory, Integer> counts,
      int pending,
      List<ReconciliationItem> items,
      String error);

  /** A run with its items. */
  Optional<ReconciliationRun> findRun(long runId);

  /** The newest finished run (with its items), a failed one included. */
  Optional<ReconciliationRun> latestFinishedRun();

  /** Up to {@code limit} finished runs, newest first, without their items. */
  List<ReconciliationRun> recentRuns(int limit);

  /**
   * The newest run that finished with a verdict (without items), and its age by the database clock.
   */
  Optional<Map.Entry<ReconciliationRun, Duration>> latestSuccessfulRun();

  /** The database's current time. */
  Instant databaseNow();
}
