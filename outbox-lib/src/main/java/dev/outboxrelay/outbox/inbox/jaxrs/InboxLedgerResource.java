package dev.outboxrelay.outbox.inbox.jaxrs;

import dev.outboxrelay.outbox.inbox.InboxLedger;
import dev.outboxrelay.outbox.inbox.jta.TransactionalInbox;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Response;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The inbox served as a ledger in the relay's {@code http-ledger} format: extend it with a
 * {@code @Path} (e.g. {@code /ledger}) and point the relay's {@code
 * outbox.destinations.<name>.reconciliation.url} at it. Nothing is registered unless an application
 * extends it.
 *
 * <ul>
 *   <li>{@code GET ?since=<ISO-8601 instant>&limit=<1..1000, default 100>&destination=<name>}:
 *       {@code {"items":[{"operationId","destination","messageId","appliedAt","deliveries",
 *       "appliedCount"}],"next":..}} ({@link InboxLedger#page}); pass {@code next} as {@code since}
 *       for the next page, null on the last.
 *   <li>{@code GET /summary}: {@code {"applied","deliveries","redeliveries"}}.
 * </ul>
 *
 * A malformed {@code since}, or a {@code limit} out of range, is answered 400 naming it.
 */
@Produces("application/json")
public abstract class InboxLedgerResource {
  public static final int DEFAULT_LIMIT = 100;
  public static final int MAX_LIMIT = 1000;

  @Inject TransactionalInbox inbox;

  @GET
  public Response page(
      @QueryParam("since") String since,
      @QueryParam("limit") String limit,
      @QueryParam("destination") String destination) {
    Instant from = null;
    if (since != null && !since.isBlank()) {
      try {
        from = Instant.parse(since.strip());
      } catch (DateTimeParseException e) {
        return InboxWebhook.problem(
            400,
            "since must be an ISO-8601 instant such as"
                + " 2024-01-31T12:00:00Z, was '"
                + since
                + "'",
            "since");
      }
    }
    int n = DEFAULT_LIMIT;
    if (limit != null && !limit.isBlank()) {
      try {
        n = Integer.parseInt(limit.strip());
      } catch (NumberFormatException e) {
        n = -1;
      }
      if (n < 1 || n > MAX_LIMIT) {
        return InboxWebhook.problem(
            400,
            "limit must be a whole number from 1 to " + MAX_LIMIT + ", was '" + limit + "'",
            "limit");
      }
    }
    String dest = destination == null || destination.isBlank() ? null : destination;
    return Response.ok(new InboxLedger(inbox.dataSource()).page(from, n, dest)).build();
  }

  @GET
  @Path("/summary")
  public Response summary() {
    InboxLedger.Totals t = new InboxLedger(inbox.dataSource()).totals();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("applied", t.applied());
    body.put("deliveries", t.deliveries());
    body.put("redeliveries", t.redeliveries());
    return Response.ok(body).build();
  }
}
