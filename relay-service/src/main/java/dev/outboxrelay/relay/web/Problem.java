package dev.outboxrelay.relay.web;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;

/**
 * An {@code application/problem+json} body (RFC 7807 / 9457) with two extension members, each
 * omitted when it does not apply: {@code field}, the request field (query parameter, path parameter
 * or JSON property) that was rejected, and {@code run_id}, a reconciliation run that ended without
 * a verdict.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(
    String type,
    String title,
    int status,
    String detail,
    String field,
    @JsonProperty("run_id") Long runId) {

  public static final String MEDIA_TYPE = "application/problem+json";

  /** A problem response with {@code type} {@code about:blank} and the status's reason as title. */
  public static Response response(Status status, String detail, String field) {
    return response(status.getStatusCode(), status.getReasonPhrase(), detail, field);
  }

  /** A problem about a reconciliation run ({@code run_id}). */
  public static Response response(Status status, String detail, String field, Long runId) {
    Problem body =
        new Problem(
            "about:blank", status.getReasonPhrase(), status.getStatusCode(), detail, field, runId);
    return Response.status(status).type(MEDIA_TYPE).entity(body).build();
  }

  /** For statuses that {@link Status} does not name (e.g. 405 on older APIs, 422). */
  public static Response response(int status, String title, String detail, String field) {
    Problem body = new Problem("about:blank", title, status, detail, field, null);
    return Response.status(status).type(MEDIA_TYPE).entity(body).build();
  }
}
