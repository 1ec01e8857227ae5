package dev.outboxrelay.relay.admin;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.outboxrelay.outbox.store.DeadJobCount;
import dev.outboxrelay.outbox.store.DeadOrderingKey;
import dev.outboxrelay.outbox.store.JobSummary;
import dev.outboxrelay.outbox.store.StoredAttempt;
import dev.outboxrelay.outbox.store.StoredJob;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The admin API's response bodies. Field names are snake_case like the database columns and the
 * reconciliation report; none carries destination configuration (URLs, secrets). The job listing's
 * row and page are public: the console lists jobs, and shows the job holding a key back, as they
 * are.
 */
public final class AdminViews {
  private AdminViews() {}

  /**
   * Jobs per state ({@code R}, {@code W}, ...) as {@code GET /admin/stats} and the console's
   * overview count them, in the store's order.
   */
  public static Map<String, Long> byState(Map<Character, Long> counts) {
    Map<String, Long> byState = new LinkedHashMap<>();
    counts.forEach((state, n) -> byState.put(String.valueOf(state), n));
    return byState;
  }

  /** Jobs per destination (in the store's order, by name) and state, as {@link #byState}. */
  public static Map<String, Map<String, Long>> byDestination(
      Map<String, Map<Character, Long>> counts) {
    Map<String, Map<String, Long>> byDestination = new LinkedHashMap<>();
    counts.forEach((destination, c) -> byDestination.put(destination, byState(c)));
    return byDestination;
  }

  /** One job in a listing: no payload or headers. */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record JobView(
      long id,
      String operationId,
      String destination,
      String orderingKey,
      String state,
      int attempts,
      String lastError,
      String errorClass,
      Instant failedAt,
      Instant deliverAfter,
      Instant createdAt,
      Instant claimedAt,
      Instant leaseUntil,
      Instant sentAt,
      Instant confirmedAt) {

    public static JobView of(JobSummary m) {
      return new JobView(
          m.id(),
          m.operationId(),
          m.destination(),
          m.orderingKey(),
          String.valueOf(m.state()),
          m.attempts(),
          m.lastError(),
          m.errorClass(),
          m.failedAt(),
          m.deliverAfter(),
          m.createdAt(),
          m.claimedAt(),
          m.leaseUntil(),
          m.sentAt(),
          m.confirmedAt());
    }
  }

  /**
   * A page of jobs in id order. {@code next_after_id} is the {@code after_id} of the next page,
   * null on the last one.
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record JobPage(List<JobView> messages, int limit, Long nextAfterId) {
    /**
     * The page of {@code pageSize} jobs out of {@code rows}, read with one row more than the page:
     * whether another page follows, without a count.
     */
    public static JobPage of(List<JobSummary> rows, int pageSize) {
      List<JobView> page = rows.stream().limit(pageSize).map(JobView::of).toList();
      Long next = rows.size() > pageSize ? page.get(page.size() - 1).id() : null;
      return new JobPage(page, pageSize, next);
    }
  }

  /**
   * One job with everything stored about it; sensitive header values are redacted. For a
   * by-reference job ({@code payload_by_reference}) {@code payload} is its reference text: the body
   * itself stays in {@code outbox_payload} (it can be large).
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  record JobDetailView(
      long id,
      String operationId,
      String destination,
      String orderingKey,
      String state,
      int attempts,
      String lastError,
      String contentType,
      Map<String, String> headers,
      String payload,
      boolean payloadByReference,
      Instant deliverAfter,
      Instant createdAt,
      Instant claimedAt,
      Instant leaseUntil,
      Instant sentAt,
      Instant confirmedAt) {

    static JobDetailView of(StoredJob m, Map<String, String> headers) {
      return new JobDetailView(
          m.id(),
          m.operationId(),
          m.destination(),
          m.orderingKey(),
          String.valueOf(m.state()),
          m.attempts(),
          m.lastError(),
          m.contentType(),
          headers,
          m.payload(),
          m.payloadByReference(),
          m.deliverAfter(),
          m.createdAt(),
          m.claimedAt(),
          m.leaseUntil(),
          m.sentAt(),
          m.confirmedAt());
    }
  }

  /**
   * One row of {@code outbox_attempt}; {@code relay_instance}: the relay process that made it
   * ({@code host/pid/random}), null for a cancel, an expired lease or an attempt recorded before
   * V7.
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  record AttemptView(
      int attemptNo,
      String outcome,
      Instant startedAt,
      Instant finishedAt,
      String errorClass,
      String errorMessage,
      String responseSummary,
      String claimToken,
      String relayInstance) {

    static AttemptView of(StoredAttempt a) {
      return new AttemptView(
          a.attemptNo(),
          a.outcome().name(),
          a.startedAt(),
          a.finishedAt(),
          a.errorClass(),
          a.errorMessage(),
          a.responseSummary(),
          a.claimToken() == null ? null : a.claimToken().toString(),
          a.relayInstance());
    }
  }

  /** {@code GET /admin/messages/{id}}: the job and its attempts, oldest first. */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  record JobDetail(JobDetailView message, List<AttemptView> attempts) {}

  /** The result of a replay or cancel: the job's state before and after, and who acted. */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  record ActionResult(long id, String action, String previousState, String state, String by) {}

  /**
   * A bulk replay. {@code matched}: dead jobs the filter matched when counted; {@code replayed}:
   * jobs moved to {@code R} (absent on a dry run). A run replays at most {@code limit} jobs, lowest
   * ids first; repeat it for the rest.
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  @JsonInclude(JsonInclude.Include.NON_NULL)
  record BulkReplayResult(boolean dryRun, long matched, Integer replayed, int limit, String by) {}

  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  record ErrorClassView(String errorClass, long count) {
    static ErrorClassView of(DeadJobCount c) {
      return new ErrorClassView(c.errorClass(), c.count());
    }
  }

  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  record DeadKeyView(String orderingKey, long deadCount, long firstDeadId) {
    static DeadKeyView of(DeadOrderingKey k) {
      return new DeadKeyView(k.orderingKey(), k.deadCount(), k.firstDeadId());
    }
  }

  /**
   * {@code GET /admin/stats}. {@code dead_ordering_keys}: keys that had a job skipped (a dead job
   * does not block its key); at most {@link AdminService#DEAD_KEYS_SHOWN}, oldest dead job first,
   * with {@code dead_ordering_keys_truncated} telling whether there are more.
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  record Stats(
      Map<String, Long> byState,
      Map<String, Map<String, Long>> byDestination,
      double oldestReadyAgeSeconds,
      List<ErrorClassView> deadByErrorClass,
      List<DeadKeyView> deadOrderingKeys,
      boolean deadOrderingKeysTruncated) {}
}
