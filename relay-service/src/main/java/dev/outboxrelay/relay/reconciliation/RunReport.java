package dev.outboxrelay.relay.reconciliation;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.outboxrelay.outbox.store.ReconciliationCategory;
import dev.outboxrelay.outbox.store.ReconciliationItem;
import dev.outboxrelay.outbox.store.ReconciliationRun;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON of a run ({@code GET /reconciliation/report}, {@code GET /reconciliation/runs/{id}},
 * {@code POST /reconciliation/runs}): its {@link Summary} and {@code items}, every job or
 * confirmation not matched, by category then operation ID ({@code items} empty when the run ended
 * with an {@code error}).
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record RunReport(@JsonUnwrapped Summary summary, List<Item> items) {

  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record Item(
      String operationId,
      Long messageId,
      String destination,
      String state,
      String category,
      Instant sentAt,
      int confirmedCount,
      String lastError,
      String action) {

    static Item of(ReconciliationItem i) {
      return new Item(
          i.operationId(),
          i.messageId(),
          i.destination(),
          i.state() == null ? null : String.valueOf(i.state()),
          i.category().wireName(),
          i.sentAt(),
          i.confirmedCount(),
          i.lastError(),
          i.action());
    }
  }

  /**
   * A run without its items: one entry of {@code GET /reconciliation/runs}, and the head of a
   * {@link RunReport}. {@code counts} has every reported category (all 0 when the run ended with an
   * {@code error}).
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record Summary(
      long runId,
      Instant windowStart,
      Instant windowEnd,
      Instant startedAt,
      Instant finishedAt,
      String triggeredBy,
      String owner,
      Map<String, Integer> counts,
      int pending,
      String error) {

    public static Summary of(ReconciliationRun run) {
      Map<String, Integer> counts = new LinkedHashMap<>();
      for (ReconciliationCategory c : ReconciliationCategory.REPORTED) {
        counts.put(c.wireName(), run.counts().getOrDefault(c, 0));
      }
      return new Summary(
          run.id(),
          run.windowStart(),
          run.windowEnd(),
          run.startedAt(),
          run.finishedAt(),
          run.triggeredBy(),
          run.owner(),
          counts,
          run.pending(),
          run.error());
    }
  }

  public static RunReport of(ReconciliationRun run) {
    return new RunReport(Summary.of(run), run.items().stream().map(Item::of).toList());
  }
}
