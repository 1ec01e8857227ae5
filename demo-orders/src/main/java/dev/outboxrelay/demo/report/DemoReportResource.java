package dev.outboxrelay.demo.report;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * {@code GET /demo/report}: {@code {"orders":n,"outbox":{"R":..,"W":..,"S":..,"C":..,"D":..},
 * "applied":n,"redeliveries":n,"duplicates":n,"lost":n,"lostOperationIds":[..]}}. bin/demo polls it
 * until the outbox is drained and checks {@code lost} and {@code duplicates} are 0.
 */
@Path("/demo/report")
public class DemoReportResource {

  @Inject DemoReportService reports;

  /** The current report; see {@link DemoReport} for the fields. */
  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public DemoReport report() {
    return reports.report();
  }
}
