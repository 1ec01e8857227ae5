package dev.outboxrelay.relay.reconciliation;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
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
public record RunReport(@JsonUnwrapped Summary summary, @JsonProperty("items") List<Item> items) {

  public record Item(
      @JsonProperty("operation_id") String operationId,
      @JsonProperty("message_id") Long messageId,
      @JsonProperty("destination") String destination,
      @JsonProperty("state") String state,
      @JsonProperty("category") String category,
      @JsonProperty("sent_at") Instant sentAt,
      @JsonProperty("confirmed_count") int confirmedCount,
      @JsonProperty("last_error") String lastError,
      @JsonProperty("action") String action) {

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
  public record Summary(
      @JsonProperty("run_id") long runId,
      @JsonProperty("window_start") Instant windowStart,
      @JsonProperty("window_end") Instant windowEnd,
      @JsonProperty("started_at") Instant startedAt,
      @JsonProperty("finished_at") Instant finishedAt,
      @JsonProperty("triggered_by") String triggeredBy,
      @JsonProperty("owner") String owner,
      @JsonProperty("counts") Map<String, Integer> counts,
      @JsonProperty("pending") int pending,
      @JsonProperty("error") String error) {

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
