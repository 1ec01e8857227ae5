package dev.outboxrelay.relay.reconciliation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.outboxrelay.outbox.store.ReconciliationRun;
import dev.outboxrelay.relay.web.Problem;
import dev.outboxrelay.relay.web.ProblemException;
import dev.outboxrelay.relay.web.RequestInput;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;
import jakarta.ws.rs.core.UriBuilder;
import jakarta.ws.rs.core.UriInfo;
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
 * {@code POST /reconciliation/runs} (role {@code outbox-operator}): runs reconciliation now over an
 * optional body {@code {"window_start": "<instant>", "window_end": "<instant>"}} (defaults: the
 * configured window ending now) and answers 201 with the run, 409 while another relay runs one, 502
 * (problem with {@code run_id}) when a confirmation source failed. {@code GET
 * /reconciliation/report} (latest finished run) and {@code GET /reconciliation/runs/{id}} (roles
 * {@code outbox-viewer}, {@code outbox-operator}). Each takes {@code ?source=<name>} (default: the
 * first source, the only one on a single-database relay); an unknown source is a 400. Bad input:
 * 400 {@code application/problem+json} naming the field (the rules of {@link RequestInput}: unknown
 * or repeated query parameters, ASCII-digit ids, duplicate JSON keys, instants out of range; a body
 * that is not JSON: 415); an unknown run or no run yet: 404. The HTML page ignores query
 * parameters: its script keeps its filters there.
 */
@Path("/reconciliation")
@Produces(MediaType.APPLICATION_JSON)
public class ReconciliationResource {
  static final Set<String> BODY_FIELDS = Set.of("window_start", "window_end");
  static final Set<String> SOURCE_ONLY = Set.of("source");
  static final Set<String> RUNS_PARAMETERS = Set.of("source", "limit");

  @Inject ReconciliationService service;

  @POST
  @Path("/runs")
  @Consumes(MediaType.WILDCARD)
  @RolesAllowed("outbox-operator")
  public Response run(
      @QueryParam("source") String source,
      @Context UriInfo uri,
      @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType,
      String body) {
    RequestInput.queryParameters(uri.getQueryParameters(), SOURCE_ONLY);
    Instant[] window = parseWindow(contentType, body);
    ReconciliationRun run = service.runOnDemand(source, window[0], window[1]);
    if (run.error() != null) {
      return Problem.response(
          Status.BAD_GATEWAY,
          "reconciliation run " + run.id() + " ended without a verdict: " + run.error(),
          null,
          run.id());
    }
    return Response.created(UriBuilder.fromPath("/reconciliation/runs/{id}").build(run.id()))
        .type(MediaType.APPLICATION_JSON)
        .entity(RunReport.of(run))
        .build();
  }

  @GET
  @Path("/report")
  @RolesAllowed({"outbox-viewer", "outbox-operator"})
  public Response report(@QueryParam("source") String source, @Context UriInfo uri) {
    RequestInput.queryParameters(uri.getQueryParameters(), SOURCE_ONLY);
    return service
        .latestRun(source)
        .map(r -> Response.ok(RunReport.of(r)).build())
        .orElseGet(
            () ->
                Problem.response(
                    Status.NOT_FOUND,
                    "no reconciliation run has finished yet: POST /reconciliation/runs runs one",
                    null,
                    null));
  }

  /** Most runs {@code GET /reconciliation/runs} lists. */
  static final int MAX_RUNS = 200;

  /** The newest finished runs without items, newest first: {@code {"runs": [...]}}. */
  @GET
  @Path("/runs")
  @RolesAllowed({"outbox-viewer", "outbox-operator"})
  public Response runs(
      @QueryParam("source") String source,
      @QueryParam("limit") String limit,
      @Context UriInfo uri) {
    RequestInput.queryParameters(uri.getQueryParameters(), RUNS_PARAMETERS);
    int n = limit == null ? 20 : (int) RequestInput.integer(limit, "limit", 1, MAX_RUNS);
    return Response.ok(
            Map.of(
                "runs", service.recentRuns(source, n).stream().map(RunReport.Summary::of).toList()))
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
          .header(
              "Content-Security-Policy",
              "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static final String PAGE = "/web/reconciliation.html";

  @GET
  @Path("/runs/{id}")
  @RolesAllowed({"outbox-viewer", "outbox-operator"})
  public Response runById(
      @QueryParam("source") String source, @PathParam("id") String id, @Context UriInfo uri) {
    RequestInput.queryParameters(uri.getQueryParameters(), SOURCE_ONLY);
    long runId = RequestInput.id(id, "id");
    return service
        .findRun(source, runId)
        .map(r -> Response.ok(RunReport.of(r)).build())
        .orElseGet(
            () -> Problem.response(Status.NOT_FOUND, "no reconciliation run " + runId, "id", null));
  }

  /** [start, end], each null when absent; validated before anything runs. */
  static Instant[] parseWindow(String contentType, String body) {
    JsonNode json = RequestInput.jsonObject(contentType, body);
    if (json == null) {
      return new Instant[2];
    }
    for (Iterator<String> names = json.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!BODY_FIELDS.contains(name)) {
        throw ProblemException.badRequest(
            name, "unknown field '" + name + "'; expected window_start, window_end");
      }
    }
    Instant start = instant(json, "window_start");
    Instant end = instant(json, "window_end");
    if (start != null && end != null && !end.isAfter(start)) {
      throw ProblemException.badRequest(
          "window_end", "window_end (" + end + ") must be after window_start (" + start + ")");
    }
    return new Instant[] {start, end};
  }

  private static Instant instant(JsonNode json, String field) {
    JsonNode v = json.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (v.isTextual()) {
      Instant t = null;
      try {
        t = Instant.parse(v.asText().strip());
      } catch (DateTimeParseException e) {
        // answered below
      }
      if (t != null) {
        return RequestInput.inRange(t, field);
      }
    }
    throw ProblemException.badRequest(
        field, field + " must be an ISO-8601 instant such as 2024-01-31T12:00:00Z," + " was " + v);
  }
}
