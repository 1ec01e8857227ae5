package dev.outboxrelay.relay.admin;

import static dev.outboxrelay.relay.web.Roles.OPERATOR;
import static dev.outboxrelay.relay.web.Roles.VIEWER;

import dev.outboxrelay.relay.admin.AdminInput.BulkReplay;
import dev.outboxrelay.relay.admin.AdminViews.ActionResult;
import dev.outboxrelay.relay.admin.AdminViews.BulkReplayResult;
import dev.outboxrelay.relay.admin.AdminViews.JobDetail;
import dev.outboxrelay.relay.admin.AdminViews.JobPage;
import dev.outboxrelay.relay.admin.AdminViews.Stats;
import dev.outboxrelay.relay.web.RequestInput;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.UriInfo;

/**
 * The admin API (docs/design.md "Admin API"): {@code outbox-viewer} reads, {@code outbox-operator}
 * acts and reads. Parameters arrive as strings and bodies as text so that {@link AdminInput} can
 * refuse anything malformed with a 400 naming the field, instead of the framework's 404 for a
 * non-numeric path id or a generic error for bad JSON. Input rules shared with every endpoint:
 * {@link RequestInput} (unknown or repeated query parameters, ids, JSON bodies and their
 * Content-Type, instants).
 */
@Path("/admin")
@Produces(MediaType.APPLICATION_JSON)
public class AdminResource {
  @Inject AdminService admin;
  @Inject SecurityIdentity identity;

  /** {@code ?state=&destination=&ordering_key=&limit=&after_id=}: one page in id order. */
  @GET
  @Path("/messages")
  @RolesAllowed({VIEWER, OPERATOR})
  public JobPage list(@Context UriInfo uri) {
    return admin.list(AdminInput.listQuery(uri.getQueryParameters()));
  }

  @GET
  @Path("/messages/{id}")
  @RolesAllowed({VIEWER, OPERATOR})
  public JobDetail detail(@PathParam("id") String id, @Context UriInfo uri) {
    sourceOnly(uri);
    return admin.detail(AdminInput.id(id));
  }

  /** {@code D → R} with a fresh attempt budget, due now. No body. */
  @POST
  @Path("/messages/{id}/replay")
  @RolesAllowed(OPERATOR)
  public ActionResult replay(@PathParam("id") String id, @Context UriInfo uri) {
    sourceOnly(uri);
    return admin.replay(AdminInput.id(id), user());
  }

  /** {@code R → D}; optional body {@code {"reason": "..."}}. */
  @POST
  @Path("/messages/{id}/cancel")
  @RolesAllowed(OPERATOR)
  public ActionResult cancel(
      @PathParam("id") String id,
      @Context UriInfo uri,
      @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType,
      String body) {
    sourceOnly(uri);
    long messageId = AdminInput.id(id);
    return admin.cancel(messageId, user(), AdminInput.cancelReason(contentType, body));
  }

  /** Replays the dead jobs a filter matches; a dry run (the default) only counts them. */
  @POST
  @Path("/messages/replay")
  @RolesAllowed(OPERATOR)
  public BulkReplayResult bulkReplay(
      @Context UriInfo uri,
      @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType,
      String body) {
    sourceOnly(uri);
    BulkReplay r = AdminInput.bulkReplay(contentType, body);
    return admin.bulkReplay(r.filter(), r.dryRun(), r.limit(), user());
  }

  @GET
  @Path("/stats")
  @RolesAllowed({VIEWER, OPERATOR})
  public Stats stats(@Context UriInfo uri) {
    sourceOnly(uri);
    return admin.stats();
  }

  /** Every endpoint but the listing takes {@code ?source=} and nothing else. */
  private static void sourceOnly(UriInfo uri) {
    RequestInput.queryParameters(uri.getQueryParameters(), AdminInput.SOURCE_ONLY);
  }

  private String user() {
    return identity.getPrincipal().getName();
  }
}
