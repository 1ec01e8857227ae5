package dev.outboxrelay.demo.sink;

import dev.outboxrelay.demo.web.InvalidInputException;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * The demo sink's confirmations, read by reconciliation and by people.
 *
 * <ul>
 *   <li>{@code GET /ledger?since=<ISO-8601 instant>&limit=<1..1000, default 100>}: {@code
 *       {"items":[{"operationId","destination","messageId","appliedAt","deliveries",
 *       "appliedCount"}],"next":..}}, entries applied strictly after {@code since}, in
 *       {@code appliedAt}, operation ID order. Pass {@code next} as {@code since} for the next
 *       page; it is null on the last page. {@code appliedCount} is the number of invoices for the
 *       operation ID (1 unless deduplication failed).
 *   <li>{@code GET /ledger/summary}: {@code {"applied","deliveries","redeliveries",
 *       "duplicateEffects"}} over the whole ledger.
 * </ul>
 *
 * A malformed {@code since} or a {@code limit} out of range is answered with 400 naming it.
 */
@Path("/ledger")
@Produces(MediaType.APPLICATION_JSON)
public class LedgerResource {
  public static final int DEFAULT_LIMIT = 100;
  public static final int MAX_LIMIT = 1000;

  @Inject SinkLedger ledger;

  /** One page of applied operation IDs; see the class comment. */
  @GET
  public LedgerPage page(@QueryParam("since") String since, @QueryParam("limit") String limit) {
    return ledger.page(parseSince(since), parseLimit(limit));
  }

  /** Totals over the whole ledger. */
  @GET
  @Path("/summary")
  public LedgerSummary summary() {
    return ledger.summary();
  }

  private static Instant parseSince(String since) {
    if (since == null || since.isBlank()) {
      return null;
    }
    try {
      return Instant.parse(since.strip());
    } catch (DateTimeParseException e) {
      throw new InvalidInputException(
          "since",
          "since must be an ISO-8601 instant such as 2024-01-31T12:00:00Z, was '" + since + "'");
    }
  }

  private static int parseLimit(String limit) {
    if (limit == null || limit.isBlank()) {
      return DEFAULT_LIMIT;
    }
    try {
      int n = Integer.parseInt(limit.strip());
      if (n >= 1 && n <= MAX_LIMIT) {
        return n;
      }
    } catch (NumberFormatException e) {
      // answered below, like an out-of-range number
    }
    throw new InvalidInputException(
        "limit", "limit must be a whole number from 1 to " + MAX_LIMIT + ", was '" + limit + "'");
  }
}
