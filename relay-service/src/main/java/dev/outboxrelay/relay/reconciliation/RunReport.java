package dev.outboxrelay.relay.reconciliation;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import dev.outboxrelay.outbox.store.ReconciliationCategory;
import dev.outboxrelay.outbox.store.ReconciliationItem;
import dev.outboxrelay.outbox.store.ReconciliationRun;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON of a run ({@code GET /reconciliation/report}, {@code GET /reconciliation/runs/{id}},
 * {@code POST /reconciliation/runs}). {@code counts} has every reported category (all 0 and {@code
 * items} empty when the run ended with an {@code error}); {@code items} lists every job or
 * confirmation not matched, by category then operation ID.
 */
@JsonPropertyOrder({
  "run_id",
  "window_start",
  "window_end",
  "started_at",
  "finished_at",
  "triggered_by",
  "owner",
  "counts",
  "pending",
  "error",
  "items"
})
public record RunReport(
    @JsonProperty("run_id") long runId,
    @JsonProperty("window_start") Instant windowStart,
    @JsonProperty("window_end") Instant windowEnd,
    @JsonProperty("started_at") Instant startedAt,
    @JsonProperty("finished_at") Instant finishedAt,
    @JsonProperty("triggered_by") String triggeredBy,
    @JsonProperty("owner") String owner,
    @JsonProperty("counts") Map<String, Integer> counts,
    @JsonProperty("pending") int pending,
    @JsonProperty("error") String error,
    @JsonProperty("items") List<Item> items) {

  @JsonPropertyOrder({
    "operation_id",
    "message_id",
    "destination",
    "state",
    "category",
    "sent_at",
    "confirmed_count",
    "last_error",
    "action"
  })
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

  /** A run without its items: one entry of {@code GET /reconciliation/runs}. */
  @JsonPropertyOrder({
    "run_id",
    "window_start",
    "window_end",
    "started_at",
    "finished_at",
    "triggered_by",
    "counts",
    "pending",
    "error"
  })
  public record Summary(
      @JsonProperty("run_id") long runId,
      @JsonProperty("window_start") Instant windowStart,
      @JsonProperty("window_end") Instant windowEnd,
      @JsonProperty("started_at") Instant startedAt,
      @JsonProperty("finished_at") Instant finishedAt,
      @JsonProperty("triggered_by") String triggeredBy,
      @JsonProperty("counts") Map<String, Integer> counts,
      @JsonProperty("pending") int pending,
      @JsonProperty("error") String error) {

    public static Summary of(ReconciliationRun run) {
      return new Summary(
          run.id(),
          run.windowStart(),
          run.windowEnd(),
          run.startedAt(),
          run.finishedAt(),
          run.triggeredBy(),
          countsOf(run),
          run.pending(),
          run.error());
    }
  }

  private static Map<String, Integer> countsOf(ReconciliationRun run) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (ReconciliationCategory c : ReconciliationCategory.REPORTED) {
      counts.put(c.wireName(), run.counts().getOrDefault(c, 0));
    }
    return counts;
  }

  public static RunReport of(ReconciliationRun run) {
    return new RunReport(
        run.id(),
        run.windowStart(),
        run.windowEnd(),
        run.startedAt(),
        run.finishedAt(),
        run.triggeredBy(),
        run.owner(),
        countsOf(run),
        run.pending(),
        run.error(),
        run.items().stream().map(Item::of).toList());
  }
}
