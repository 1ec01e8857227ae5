package dev.outboxrelay.relay.reconciliation;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.store.ReconciliationRun;
import dev.outboxrelay.relay.web.Problem;
import dev.outboxrelay.relay.web.ProblemException;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;
import jakarta.ws.rs.core.UriBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * {@code POST /reconciliation/runs} (role {@code outbox-operator}): runs reconciliation now over
 * an optional body {@code {"window_start": "<instant>", "window_end": "<instant>"}} (defaults: the
 * configured window ending now) and answers 201 with the run, 409 while another relay runs one,
 * 502 (problem with {@code run_id}) when a confirmation source failed. {@code GET
 * /reconciliation/report} (latest finished run) and {@code GET /reconciliation/runs/{id}} (roles
 * {@code outbox-viewer}, {@code outbox-operator}). Each takes {@code ?source=<name>} (default: the
 * first source, the only one on a single-database relay); an unknown source is a 400. Bad input: 400 {@code application/problem+json}
 * naming the field; an unknown run or no run yet: 404.
 */
@Path("/reconciliation")
@Produces(MediaType.APPLICATION_JSON)
public class ReconciliationResource {
  static final Set<String> BODY_FIELDS = Set.of("window_start", "window_end");
  private static final ObjectMapper JSON = new ObjectMapper();

  @Inject ReconciliationService service;

  @POST
  @Path("/runs")
  @Consumes(MediaType.WILDCARD)
  @RolesAllowed("outbox-operator")
  public Response run(@QueryParam("source") String source, String body) {
    Instant[] window = parseWindow(body);
    ReconciliationRun run = service.runOnDemand(source, window[0], window[1]);
    if (run.error() != null) {
      return Problem.response(Status.BAD_GATEWAY, "reconciliation run " + run.id()
          + " ended without a verdict: " + run.error(), null, run.id());
    }
    return Response.created(UriBuilder.fromPath("/reconciliation/runs/{id}").build(run.id()))
        .type(MediaType.APPLICATION_JSON).entity(RunReport.of(run)).build();
  }

  @GET
  @Path("/report")
  @RolesAllowed({"outbox-viewer", "outbox-operator"})
  public Response report(@QueryParam("source") String source) {
    return service.latestRun(source).map(r -> Response.ok(RunReport.of(r)).build())
        .orElseGet(() -> Problem.response(Status.NOT_FOUND,
            "no reconciliation run has finished yet: POST /reconciliation/runs runs one", null, null));
  }

  /** Most runs {@code GET /reconciliation/runs} lists. */
  static final int MAX_RUNS = 200;

  /** The newest finished runs without items, newest first: {@code {"runs": [...]}}. */
  @GET
  @Path("/runs")
  @RolesAllowed({"outbox-viewer", "outbox-operator"})
  public Response runs(@QueryParam("source") String source, @QueryParam("limit") String limit) {
    int n = 20;
    if (limit != null) {
      try {
        n = Integer.parseInt(limit.strip());
      } catch (NumberFormatException e) {
        throw ProblemException.badRequest("limit", "limit must be a whole number from 1 to " + MAX_RUNS
            + ", was '" + limit + "'");
      }
      if (n < 1 || n > MAX_RUNS) {
        throw ProblemException.badRequest("limit", "limit must be from 1 to " + MAX_RUNS + ", was " + n);
      }
    }
    return Response.ok(Map.of("runs", service.recentRuns(source, n).stream().map(RunReport.Summary::of).toList()))
        .build();
  }

  /**
   * The report page for people: counts at a glance, categories over recent runs, the items with
   * filters. Static HTML whose script reads the JSON endpoints above with the caller's login.
   */
  @GET
  @Produces(MediaType.TEXT_HTML)
  @RolesAllowed({"outbox-viewer", "outbox-operator"})
  public Response page() {
    try (InputStream in = ReconciliationResource.class.getResourceAsStream(PAGE)) {
      if (in == null) {
        throw new IllegalStateException(PAGE + " is missing from the relay's classpath");
      }
      return Response.ok(new String(in.readAllBytes(), StandardCharsets.UTF_8))
          .header("Cache-Control", "no-store")
          .header("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static final String PAGE = "/web/reconciliation.html";

  @GET
  @Path("/runs/{id}")
  @RolesAllowed({"outbox-viewer", "outbox-operator"})
  public Response runById(@QueryParam("source") String source, @PathParam("id") String id) {
    long runId;
    try {
      runId = Long.parseLong(id.strip());
    } catch (NumberFormatException e) {
      throw ProblemException.badRequest("id", "id must be a run id (a whole number), was '" + id + "'");
    }
    return service.findRun(source, runId).map(r -> Response.ok(RunReport.of(r)).build())
        .orElseGet(() -> Problem.response(Status.NOT_FOUND,
            "no reconciliation run " + runId, "id", null));
  }

  /** [start, end], each null when absent; validated before anything runs. */
  static Instant[] parseWindow(String body) {
    if (body == null || body.isBlank()) {
      return new Instant[2];
    }
    JsonNode json;
    try {
      json = JSON.readTree(body);
    } catch (JsonProcessingException e) {
      throw ProblemException.badRequest("body", "the body must be a JSON object such as"
          + " {\"window_start\":\"2024-01-31T12:00:00Z\",\"window_end\":\"2024-01-31T13:00:00Z\"}: "
          + e.getOriginalMessage());
    }
    if (json == null || !json.isObject()) {
      throw ProblemException.badRequest("body", "the body must be a JSON object with window_start and/or"
          + " window_end, was " + (json == null ? "empty" : json.getNodeType().name().toLowerCase()));
    }
    for (Iterator<String> names = json.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!BODY_FIELDS.contains(name)) {
        throw ProblemException.badRequest(name, "unknown field '" + name + "'; expected window_start, window_end");
      }
    }
    Instant start = instant(json, "window_start");
    Instant end = instant(json, "window_end");
    if (start != null && end != null && !end.isAfter(start)) {
      throw ProblemException.badRequest("window_end", "window_end (" + end + ") must be after window_start ("
          + start + ")");
    }
    return new Instant[] {start, end};
  }

  private static Instant instant(JsonNode json, String field) {
    JsonNode v = json.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (v.isTextual()) {
      try {
        return Instant.parse(v.asText().strip());
      } catch (DateTimeParseException e) {
        // answered below
      }
    }
    throw ProblemException.badRequest(field, field + " must be an ISO-8601 instant such as 2024-01-31T12:00:00Z,"
        + " was " + v);
  }
}
