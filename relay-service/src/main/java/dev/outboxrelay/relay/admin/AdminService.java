package dev.outboxrelay.relay.admin;

import static dev.outboxrelay.relay.web.ProblemException.conflict;
import static dev.outboxrelay.relay.web.ProblemException.notFound;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.store.DeadJobFilter;
import dev.outboxrelay.outbox.store.DeadOrderingKey;
import dev.outboxrelay.outbox.store.JobQuery;
import dev.outboxrelay.outbox.store.JobState;
import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.relay.admin.AdminViews.ActionResult;
import dev.outboxrelay.relay.admin.AdminViews.AttemptView;
import dev.outboxrelay.relay.admin.AdminViews.BulkReplayResult;
import dev.outboxrelay.relay.admin.AdminViews.DeadKeyView;
import dev.outboxrelay.relay.admin.AdminViews.ErrorClassView;
import dev.outboxrelay.relay.admin.AdminViews.JobDetail;
import dev.outboxrelay.relay.admin.AdminViews.JobDetailView;
import dev.outboxrelay.relay.admin.AdminViews.JobPage;
import dev.outboxrelay.relay.admin.AdminViews.Stats;
import dev.outboxrelay.relay.lifecycle.RelayService;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.vertx.ext.web.RoutingContext;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/**
 * What the admin API does, on the relay's store. Every operator action is one conditional update
 * (or one transaction), so a refused action changed nothing; each one that changed something is
 * logged with the operator's name and the job ids or count (never payloads or secrets) and counted
 * in {@code outbox_admin_actions_total{action}}.
 */
@ApplicationScoped
public class AdminService {
  private static final Logger LOG = Logger.getLogger(AdminService.class);

  /** Ordering keys with dead jobs listed by the stats at most. */
  static final int DEAD_KEYS_SHOWN = 100;

  /** Actions counted by {@code outbox_admin_actions_total{action}}. */
  static final List<String> ACTIONS =
      List.of("replay", "cancel", "bulk_replay", "bulk_replay_dry_run");

  /**
   * Job headers whose values are credentials more often than not; shown as {@value #REDACTED}. A
   * job's headers go to its sink, and some applications put a token for the sink there.
   */
  private static final Pattern SENSITIVE_HEADER =
      Pattern.compile(
          "(?i).*(authorization|cookie|secret|token|password|passwd|api[-_]?key|signature|credential).*");

  static final String REDACTED = "(redacted)";
  private static final ObjectMapper JSON = new ObjectMapper();

  @Inject RelayService relay;
  @Inject MeterRegistry registry;

  /** The request being served, for its {@code ?source=}. */
  @Inject CurrentVertxRequest request;

  private final Map<String, Counter> actions = new LinkedHashMap<>();

  @PostConstruct
  void registerCounters() {
    for (String action : ACTIONS) {
      actions.put(
          action,
          Counter.builder("outbox.admin.actions")
              .tag("action", action)
              .description("Operator actions through the admin API that changed or counted jobs")
              .register(registry));
    }
  }

  /**
   * The store of the request's {@code ?source=<name>} (every admin endpoint takes it), else of the
   * first source, the only one on a single-database relay. Unknown: 400; not started yet: 503.
   */
  private OutboxAdminStore store() {
    RoutingContext rc = request.getCurrent();
    return relay.source(rc == null ? null : rc.queryParams().get("source")).admin();
  }

  // ---- reading ---------------------------------------------------------------------------------

  /** {@code query.limit()} is one more than the page size, to see whether another page follows. */
  JobPage list(JobQuery query) {
    return JobPage.of(store().listJobs(query), query.limit() - 1);
  }

  JobDetail detail(long id) {
    StoredJob m = find(id);
    List<AttemptView> attempts = store().attempts(id).stream().map(AttemptView::of).toList();
    return new JobDetail(JobDetailView.of(m, redactedHeaders(m)), attempts);
  }

  Stats stats() {
    Map<String, Long> byState = AdminViews.byState(store().countByState());
    Map<String, Map<String, Long>> byDestination =
        AdminViews.byDestination(store().countByDestinationAndState());
    double oldest = store().oldestReadyAge().map(AdminService::seconds).orElse(0.0);
    List<ErrorClassView> byErrorClass =
        store().countDeadByErrorClass().stream().map(ErrorClassView::of).toList();
    List<DeadOrderingKey> keys = store().deadOrderingKeys(DEAD_KEYS_SHOWN + 1);
    boolean truncated = keys.size() > DEAD_KEYS_SHOWN;
    List<DeadKeyView> shown = keys.stream().limit(DEAD_KEYS_SHOWN).map(DeadKeyView::of).toList();
    return new Stats(byState, byDestination, oldest, byErrorClass, shown, truncated);
  }

  // ---- acting ----------------------------------------------------------------------------------

  /** {@code D → R}; 404 when unknown, 409 when not {@code D}. */
  ActionResult replay(long id, String user) {
    if (!store().replayDead(id)) {
      StoredJob m = find(id);
      throw conflict(
          "state",
          "message "
              + id
              + " is "
              + JobState.fromCode(m.state()).label()
              + ", not "
              + JobState.DEAD.label()
              + ": only a dead job can be replayed"
              + (JobState.DEAD.is(m.state()) ? " (it changed while replaying; try again)" : ""));
    }
    count("replay");
    LOG.infof("admin: %s replayed message %d (D -> R, attempts reset)", user, id);
    return new ActionResult(id, "replay", "D", "R", user);
  }

  /**
   * {@code R → D} recorded as cancelled by {@code user}; 404 when unknown, 409 when not {@code R}.
   */
  ActionResult cancel(long id, String user, String reason) {
    String error =
        "cancelled by " + user + " via the admin API" + (reason == null ? "" : ": " + reason);
    if (!store().cancelReady(id, error)) {
      StoredJob m = find(id);
      if (JobState.WORKING.is(m.state())) {
        throw conflict(
            "state",
            "message "
                + id
                + " is "
                + JobState.WORKING.label()
                + ": a relay is delivering it right now"
                + " and a send cannot be recalled; if it fails it returns to R and can be cancelled then");
      }
      throw conflict(
          "state",
          "message "
              + id
              + " is "
              + JobState.fromCode(m.state()).label()
              + ", not "
              + JobState.READY.label()
              + ": only a job waiting for delivery can be cancelled"
              + (JobState.READY.is(m.state()) ? " (it changed while cancelling; try again)" : ""));
    }
    count("cancel");
    LOG.infof(
        "admin: %s cancelled message %d (R -> D)%s",
        user, id, reason == null ? "" : ", reason: " + reason);
    return new ActionResult(id, "cancel", "R", "D", user);
  }

  /** Counts the matching dead jobs, and on a real run replays up to {@code limit} of them. */
  BulkReplayResult bulkReplay(DeadJobFilter filter, boolean dryRun, int limit, String user) {
    long matched = store().countDead(filter);
    if (dryRun) {
      count("bulk_replay_dry_run");
      LOG.infof(
          "admin: %s counted %d dead job(s) for a bulk replay (dry run) of %s",
          user, matched, describe(filter));
      return new BulkReplayResult(true, matched, null, limit, user);
    }
    int replayed = store().replayDead(filter, limit);
    count("bulk_replay");
    LOG.infof(
        "admin: %s replayed %d dead job(s) (D -> R, attempts reset; %d matched, limit %d) of %s",
        user, replayed, matched, limit, describe(filter));
    return new BulkReplayResult(false, matched, replayed, limit, user);
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private StoredJob find(long id) {
    return store().findJob(id).orElseThrow(() -> notFound("id", "no message with id " + id));
  }

  private void count(String action) {
    actions.get(action).increment();
  }

  private static double seconds(Duration d) {
    return d.toMillis() / 1000.0;
  }

  /** The filter for the log: names only the conditions that are set. */
  private static String describe(DeadJobFilter f) {
    if (f.isEmpty()) {
      return "all dead jobs";
    }
    StringBuilder s = new StringBuilder("dead jobs with");
    Optional.ofNullable(f.destination())
        .ifPresent(v -> s.append(" destination='").append(v).append('\''));
    Optional.ofNullable(f.errorClass())
        .ifPresent(v -> s.append(" error_class='").append(v).append('\''));
    Optional.ofNullable(f.deadFrom()).ifPresent(v -> s.append(" dead_from=").append(v));
    Optional.ofNullable(f.deadTo()).ifPresent(v -> s.append(" dead_to=").append(v));
    Optional.ofNullable(f.orderingKey())
        .ifPresent(v -> s.append(" ordering_key='").append(v).append('\''));
    return s.toString();
  }

  /** The job's headers with the values of credential-like names replaced. */
  static Map<String, String> redactedHeaders(StoredJob m) {
    if (m.headersJson() == null || m.headersJson().isEmpty()) {
      return Map.of();
    }
    Map<String, String> headers;
    try {
      headers =
          JSON.readValue(m.headersJson(), new TypeReference<LinkedHashMap<String, String>>() {});
    } catch (IOException e) {
      // Written by the library as a JSON object of strings; anything else is shown as unreadable.
      return Map.of("(unreadable)", REDACTED);
    }
    headers.replaceAll(
        (name, value) -> SENSITIVE_HEADER.matcher(name).matches() ? REDACTED : value);
    return headers;
  }
}
