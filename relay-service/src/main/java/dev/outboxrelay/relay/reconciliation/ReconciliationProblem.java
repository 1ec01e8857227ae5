package dev.outboxrelay.relay.reconciliation;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;

/**
 * An {@code application/problem+json} body (RFC 9457) with two extension members: {@code field}
 * (the rejected request field) and {@code run_id} (a run that ended without a verdict); each
 * omitted when it does not apply.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ReconciliationProblem(String type, String title, int status, String detail, String field,
    @JsonProperty("run_id") Long runId) {

  public static final String MEDIA_TYPE = "application/problem+json";

  static Response response(Status status, String detail, String field, Long runId) {
    return Response.status(status).type(MEDIA_TYPE).entity(new ReconciliationProblem("about:blank",
        status.getReasonPhrase(), status.getStatusCode(), detail, field, runId)).build();
  }

  /** A request field was rejected; answered 400. */
  public static class InvalidRequestException extends RuntimeException {
    private final String field;

    public InvalidRequestException(String field, String message) {
      super(message);
      this.field = field;
    }

    public String field() {
      return field;
    }
  }
}
