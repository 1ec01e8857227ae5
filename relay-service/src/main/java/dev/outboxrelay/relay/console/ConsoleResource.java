package dev.outboxrelay.relay.console;

import static dev.outboxrelay.relay.web.Roles.OPERATOR;
import static dev.outboxrelay.relay.web.Roles.VIEWER;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.outboxrelay.outbox.store.DeadJobFilter;
import dev.outboxrelay.outbox.store.JobQuery;
import dev.outboxrelay.outbox.store.JobState;
import dev.outboxrelay.outbox.store.JobSummary;
import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.store.StoredPayload;
import dev.outboxrelay.relay.admin.AdminViews;
import dev.outboxrelay.relay.admin.AdminViews.JobPage;
import dev.outboxrelay.relay.admin.AdminViews.JobView;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.source.RelaySource;
import dev.outboxrelay.relay.state.StateChangeLog;
import dev.outboxrelay.relay.web.ProblemException;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.UriInfo;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The read endpoints the console ({@link ConsolePage}) needs beyond the admin API, under {@code
 * /admin/console} (roles {@code outbox-viewer}, {@code outbox-operator}): {@code /me} (who is
 * looking, whether they may act), {@code /overview}, {@code /jobs} (the list with the filters of
 * {@link JobFilter}), {@code /jobs/{id}} (payload size, the job holding its ordering key back) and
 * {@code /jobs/{id}/body} (a by-reference job's body, on demand). Each takes {@code ?source=<name>}
 * like the admin API (default: the first source).
 */
@Path("/admin/console")
public class ConsoleResource {
  @Inject RelayService relay;
  @Inject DeliveryRates rates;
  @Inject SecurityIdentity identity;

  // ---- who is looking
  // -----------------------------------------------------------------------------

  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record Me(String user, List<String> roles, boolean canAct, List<String> sources) {}

  @GET
  @Path("me")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed({VIEWER, OPERATOR})
  public Me me() {
    List<String> roles =
        identity.getRoles().stream()
            .filter(r -> r.equals(VIEWER) || r.equals(OPERATOR))
            .sorted()
            .toList();
    return new Me(
        identity.getPrincipal().getName(),
        roles,
        identity.hasRole(OPERATOR),
        relay.sources().stream().map(RelaySource::name).toList());
  }

  // ---- overview
  // ------------------------------------------------------------------------------------

  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record State(boolean up, String reason, Instant since) {
    static State of(StateChangeLog log) {
      StateChangeLog.Status s = log.status();
      return new State(s.up(), s.reason(), s.since());
    }
  }

  /**
   * One source: {@code by_state} and {@code by_destination} as {@code GET /admin/stats} counts
   * them, the oldest ready job's age (also per destination that has a waiting job, as the gauge
   * {@code outbox_destination_ready_oldest_age_seconds} measures it), dead jobs that died in the
   * last hour (per destination), and the deliveries this relay made in the last {@code
   * rate_window_seconds} by destination and outcome.
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record SourceOverview(
      String name,
      String dialect,
      boolean started,
      State database,
      Map<String, Long> byState,
      Map<String, Map<String, Long>> byDestination,
      Double oldestReadyAgeSeconds,
      Map<String, Double> oldestReadyAgeSecondsByDestination,
      Long deadLastHour,
      Map<String, Long> deadLastHourByDestination,
      Map<String, Map<String, Long>> deliveriesLastMinute,
      String error) {}

  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record Overview(
      Instant generatedAt,
      double rateWindowSeconds,
      List<SourceOverview> sources,
      Map<String, State> destinations) {}

  @GET
  @Path("overview")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed({VIEWER, OPERATOR})
  public Overview overview() {
    DeliveryRates.Window window = rates.lastMinute();
    List<SourceOverview> sources = new ArrayList<>();
    for (RelaySource s : relay.sources()) {
      Map<String, Map<String, Long>> deliveries = window.counts().getOrDefault(s.name(), Map.of());
      if (!s.started()) {
        sources.add(
            new SourceOverview(
                s.name(),
                s.dialect(),
                false,
                State.of(s.database()),
                null,
                null,
                null,
                null,
                null,
                null,
                deliveries,
                "the source's database has not answered since start-up"));
        continue;
      }
      OutboxAdminStore store = s.admin();
      Map<String, Long> byState = AdminViews.byState(store.countByState());
      Map<String, Map<String, Long>> byDestination =
          AdminViews.byDestination(store.countByDestinationAndState());
      double oldest = store.oldestReadyAge().map(d -> d.toMillis() / 1000.0).orElse(0.0);
      Map<String, Double> oldestByDestination = new TreeMap<>();
      store
          .backlogByDestination()
          .forEach((d, b) -> oldestByDestination.put(d, b.oldestReadyAge().toMillis() / 1000.0));
      Instant hourAgo = store.databaseNow().minus(Duration.ofHours(1));
      long deadLastHour = store.countDead(new DeadJobFilter(null, null, hourAgo, null, null));
      Map<String, Long> deadByDestination = new TreeMap<>();
      for (String d : byDestination.keySet()) {
        if (byDestination.get(d).getOrDefault("D", 0L) > 0) {
          deadByDestination.put(
              d, store.countDead(new DeadJobFilter(d, null, hourAgo, null, null)));
        }
      }
      sources.add(
          new SourceOverview(
              s.name(),
              s.dialect(),
              true,
              State.of(s.database()),
              byState,
              byDestination,
              oldest,
              oldestByDestination,
              deadLastHour,
              deadByDestination,
              deliveries,
              null));
    }
    Map<String, State> destinations = new TreeMap<>();
    relay.destinations().all().forEach((d, log) -> destinations.put(d, State.of(log)));
    return new Overview(Instant.now(), window.seconds(), sources, destinations);
  }

  // ---- jobs
  // ----------------------------------------------------------------------------------------

  /**
   * A page of matching jobs in id order, each as {@code GET /admin/messages} lists it. {@code
   * next_after_id}: the {@code after_id} of the next page, null on the last. Every filter is a
   * condition of the database's query, so a page costs its size however rare its matches are.
   */
  @GET
  @Path("jobs")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed({VIEWER, OPERATOR})
  public JobPage jobs(@Context UriInfo uri) {
    JobFilter f = JobFilter.of(uri.getQueryParameters());
    OutboxAdminStore store = store(uri.getQueryParameters().getFirst("source"));
    return JobPage.of(store.listJobs(f.query()), f.limit());
  }

  /**
   * What the console shows of a job beyond {@code GET /admin/messages/{id}}: the payload's size in
   * bytes (a by-reference body's recorded size; its body comes from {@code /body}), and for a ready
   * job with an ordering key, the earlier ready or working job of that key it waits for (as {@code
   * GET /admin/messages} lists it).
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record JobExtras(
      long id, boolean payloadByReference, Long payloadSizeBytes, JobView heldBackBy) {}

  @GET
  @Path("jobs/{id}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed({VIEWER, OPERATOR})
  public JobExtras job(@QueryParam("source") String source, @PathParam("id") String rawId) {
    long id = id(rawId);
    OutboxAdminStore store = store(source);
    StoredJob m = message(store, id);
    Long size;
    if (m.payloadByReference()) {
      size =
          relay.source(source).store().findPayload(id).map(p -> (long) p.sizeBytes()).orElse(null);
    } else {
      size = m.payload() == null ? 0L : (long) m.payload().getBytes(StandardCharsets.UTF_8).length;
    }
    JobView heldBack = null;
    if (JobState.READY.is(m.state()) && m.orderingKey() != null) {
      heldBack =
          Stream.of(JobState.WORKING, JobState.READY)
              .flatMap(
                  st ->
                      store.listJobs(new JobQuery(st.code(), null, m.orderingKey(), 0, 1)).stream())
              .filter(e -> e.id() < id)
              .min(Comparator.comparingLong(JobSummary::id))
              .map(JobView::of)
              .orElse(null);
    }
    return new JobExtras(id, m.payloadByReference(), size, heldBack);
  }

  private static StoredJob message(OutboxAdminStore store, long id) {
    return store
        .findJob(id)
        .orElseThrow(() -> ProblemException.notFound("id", "no message with id " + id));
  }

  /**
   * A by-reference job's body with its recorded size and digest; {@code mismatch} when it no longer
   * matches.
   */
  @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
  public record Body(long messageId, int sizeBytes, String sha256, String body, String mismatch) {}

  @GET
  @Path("jobs/{id}/body")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed({VIEWER, OPERATOR})
  public Body body(@QueryParam("source") String source, @PathParam("id") String rawId) {
    long id = id(rawId);
    StoredJob m = message(store(source), id);
    if (!m.payloadByReference()) {
      throw ProblemException.notFound(
          "id",
          "message " + id + " carries its payload inline: GET /admin/messages/" + id + " shows it");
    }
    StoredPayload p =
        relay
            .source(source)
            .store()
            .findPayload(id)
            .orElseThrow(
                () ->
                    ProblemException.notFound(
                        "id",
                        "message "
                            + id
                            + " is by reference but its body is missing from outbox_payload"));
    return new Body(id, p.sizeBytes(), p.sha256(), p.body(), p.mismatch());
  }

  private OutboxAdminStore store(String source) {
    return relay.source(source).admin();
  }

  private static long id(String raw) {
    long id = JobFilter.integer(raw, "id", 1, Long.MAX_VALUE, -1);
    if (id < 0) {
      throw ProblemException.badRequest("id", "id is required");
    }
    return id;
  }
}
