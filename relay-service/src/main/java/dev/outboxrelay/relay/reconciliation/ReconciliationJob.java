package dev.outboxrelay.relay.reconciliation;

import static dev.outboxrelay.outbox.store.ReconciliationCategory.PENDING;

import dev.outboxrelay.outbox.store.JobState;
import dev.outboxrelay.outbox.store.ReconciliationCategory;
import dev.outboxrelay.outbox.store.ReconciliationItem;
import dev.outboxrelay.outbox.store.ReconciliationRun;
import dev.outboxrelay.outbox.store.ReconciliationStore;
import dev.outboxrelay.outbox.store.RunStart;
import dev.outboxrelay.outbox.store.WindowEntry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.jboss.logging.Logger;

/**
 * One reconciliation pass over a window; the caller holds the fleet lock. Collects every
 * destination's confirmations first (a source that cannot answer ends the run with an error and
 * moves nothing), then classifies each destination's window and applies the conditional moves its
 * settings allow, and finishes the run with its counts and items in one transaction.
 */
public class ReconciliationJob {
  private static final Logger LOG = Logger.getLogger(ReconciliationJob.class);

  static final String REDRIVEN = "redriven";
  static final String ACCEPTED = "accepted";
  static final String CHANGED = "changed_concurrently";

  private final ReconciliationStore store;
  private final ReconciliationSettings settings;
  private final Map<String, ConfirmationSource> sources;

  public ReconciliationJob(
      ReconciliationStore store,
      ReconciliationSettings settings,
      Map<String, ConfirmationSource> sources) {
    this.store = store;
    this.settings = settings;
    this.sources = Map.copyOf(sources);
  }

  /**
   * Runs one pass. {@code stillOwner} is asked between destinations (it renews the lease); when it
   * answers false the run stops with an error. Empty when {@code start.scheduleSlot()} was already
   * reconciled.
   */
  public Optional<ReconciliationRun> reconcileOnce(RunStart start, BooleanSupplier stillOwner) {
    Optional<Long> started = store.startRun(start);
    if (started.isEmpty()) {
      return Optional.empty();
    }
    long runId = started.get();
    Map<ReconciliationCategory, Integer> counts = new EnumMap<>(ReconciliationCategory.class);
    for (ReconciliationCategory c : ReconciliationCategory.REPORTED) {
      counts.put(c, 0);
    }
    List<ReconciliationItem> items = new ArrayList<>();
    int pending = 0;
    try {
      // Confirmations of jobs created in the window come after the job; the grace period covers a
      // sink clock somewhat behind the database's.
      Instant since = start.windowStart().minus(settings.gracePeriod());
      for (ReconciliationSettings.DestinationSettings d : settings.destinations()) {
        int n = sources.get(d.name()).collect(since);
        LOG.debugf(
            "reconciliation run %d: %d confirmation(s) of '%s' from its %s",
            runId, n, d.name(), d.sourceType());
      }
      for (ReconciliationSettings.DestinationSettings d : settings.destinations()) {
        if (!stillOwner.getAsBoolean()) {
          throw new IllegalStateException(
              "the reconciliation lease was lost before destination '"
                  + d.name()
                  + "' (another relay may be reconciling); raise outbox.reconciliation.lease");
        }
        for (WindowEntry e :
            store.classifyWindow(
                d.name(), start.windowStart(), start.windowEnd(), settings.gracePeriod())) {
          if (e.category() == PENDING) {
            pending++;
            continue;
          }
          counts.merge(e.category(), 1, Integer::sum);
          String action = act(runId, d, e);
          if (e.category() != ReconciliationCategory.MATCHED) {
            items.add(ReconciliationItem.of(e, action));
          }
        }
      }
    } catch (RuntimeException e) {
      String error = e.getMessage() == null ? e.toString() : e.getMessage();
      LOG.errorf(
          "reconciliation run %d of [%s, %s) failed: %s",
          runId, start.windowStart(), start.windowEnd(), error);
      store.finishRun(runId, Map.of(), 0, List.of(), error);
      return store.findRun(runId);
    }
    store.finishRun(runId, counts, pending, items, null);
    StringBuilder summary = new StringBuilder();
    counts.forEach((c, n) -> summary.append(c.wireName()).append('=').append(n).append(' '));
    LOG.infof(
        "reconciliation run %d of [%s, %s) by %s: %spending=%d",
        runId, start.windowStart(), start.windowEnd(), start.triggeredBy(), summary, pending);
    return store.findRun(runId);
  }

  /** The conditional move a category calls for, if allowed; returns the item's action. */
  private String act(long runId, ReconciliationSettings.DestinationSettings d, WindowEntry e) {
    switch (e.category()) {
      case MATCHED -> {
        if (JobState.SENT.is(e.state()) && !store.confirmSent(e)) {
          LOG.infof(
              "reconciliation run %d: message %d (operation %s) changed before it could be marked"
                  + " confirmed; left as it is",
              runId, e.messageId(), e.operationId());
        }
        return null;
      }
      case SENT_UNCONFIRMED -> {
        if (!d.redriveUnconfirmed()) {
          return null;
        }
        boolean moved =
            store.redrive(
                e,
                "reconciliation run "
                    + runId
                    + ": sent at "
                    + e.sentAt()
                    + " but not confirmed by the sink; re-driven with the same operation ID");
        LOG.infof(
            "reconciliation run %d: message %d (operation %s) %s",
            runId,
            e.messageId(),
            e.operationId(),
            moved ? "re-driven" : "changed meanwhile, not re-driven");
        return moved ? REDRIVEN : CHANGED;
      }
      case CONFIRMED_NOT_SENT -> {
        if (!d.acceptConfirmedNotSent() || !e.knownJob() || JobState.WORKING.is(e.state())) {
          return null; // a ghost has no job; an in-flight job is left to its relay
        }
        boolean moved = store.acceptConfirmed(e);
        LOG.infof(
            "reconciliation run %d: message %d (operation %s, %s) %s",
            runId,
            e.messageId(),
            e.operationId(),
            e.state(),
            moved ? "accepted as confirmed" : "changed meanwhile, not accepted");
        return moved ? ACCEPTED : CHANGED;
      }
      default -> {
        return null;
      }
    }
  }
}
