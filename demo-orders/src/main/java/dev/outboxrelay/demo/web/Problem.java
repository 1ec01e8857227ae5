package dev.outboxrelay.demo.web;

import com.fasterxml.jackson.annotation.JsonInclude;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;

/**
 * An {@code application/problem+json} body (RFC 9457) with one extension member, {@code field}: the
 * request field that was rejected (omitted when the problem concerns no single field).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(String type, String title, int status, String detail, String field) {

  public static final String MEDIA_TYPE = "application/problem+json";

  /** A 400 response naming the rejected field. */
  public static Response badRequest(String field, String detail) {
    return response(Status.BAD_REQUEST, detail, field);
  }

  /** A 404 response. */
  public static Response notFound(String detail) {
    return response(Status.NOT_FOUND, detail, null);
  }

  /** A problem response with {@code type} {@code about:blank} and the status's reason as title. */
  public static Response response(Status status, String detail, String field) {
    Problem body =
        new Problem("about:blank", status.getReasonPhrase(), status.getStatusCode(), detail, field);
    return Response.status(status).type(MEDIA_TYPE).entity(body).build();
  }
}
