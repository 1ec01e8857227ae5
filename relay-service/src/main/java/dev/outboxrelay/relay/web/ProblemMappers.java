package dev.outboxrelay.relay.web;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DatabindException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.relay.source.SourceUnavailableException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Turns every refusal of the relay's HTTP API into a problem response, so that no input, however
 * malformed, gets a 500 or an HTML page. Security's 401 and 403 keep Quarkus' own responses (the
 * 401 carries the {@code WWW-Authenticate} challenge clients need).
 */
public class ProblemMappers {
  private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

  /** Field name used when the body as a whole cannot be read (no JSON, wrong JSON type). */
  public static final String BODY = "body";

  @ServerExceptionMapper
  public Response problem(ProblemException e) {
    return Problem.response(e.status(), e.getMessage(), e.field());
  }

  /**
   * JSON of the wrong shape for a typed body: a mistyped value, an unknown enum constant, an
   * unknown property where unknown properties fail. Replaces Quarkus' mapper for this type.
   */
  @ServerExceptionMapper
  public Response mismatchedJson(MismatchedInputException e) {
    return jsonProblem(e);
  }

  /**
   * Syntactically broken JSON reaches here wrapped by the body reader (400 with the parse error as
   * cause). Other web exceptions (404 unknown path, 405, 406, 415) keep their status but get a
   * problem body instead of an empty or HTML one.
   */
  @ServerExceptionMapper
  public Response webApplication(WebApplicationException e) {
    if (e.getCause() instanceof JacksonException jackson) {
      return jsonProblem(jackson);
    }
    Response r = e.getResponse();
    // A response with a body was built on purpose; 401 and 403 stay as security made them.
    if (r.hasEntity()
        || r.getStatus() == Status.UNAUTHORIZED.getStatusCode()
        || r.getStatus() == Status.FORBIDDEN.getStatusCode()) {
      return r;
    }
    return Problem.response(
        r.getStatus(), r.getStatusInfo().getReasonPhrase(), e.getMessage(), null);
  }

  /**
   * The database failed (down, timeout): 503, so clients retry; the detail names the operation,
   * never SQL or connection settings.
   */
  @ServerExceptionMapper
  public Response storeFailure(OutboxStoreException e) {
    LOG.errorf(e, "admin request failed in the database: %s", e.getMessage());
    return Problem.response(
        Status.SERVICE_UNAVAILABLE,
        "the outbox database failed: " + e.getMessage() + "; try again",
        null);
  }

  /** A source whose database has not answered since start-up: 503 naming it, so clients retry. */
  @ServerExceptionMapper
  public Response sourceUnavailable(SourceUnavailableException e) {
    return Problem.response(Status.SERVICE_UNAVAILABLE, e.getMessage() + "; try again", "source");
  }

  private static Response jsonProblem(JacksonException e) {
    String field = e instanceof DatabindException d ? path(d) : "";
    return Problem.response(
        Status.BAD_REQUEST,
        "request body is not valid JSON: " + e.getOriginalMessage(),
        field.isEmpty() ? BODY : field);
  }

  /** The JSON path of the failing value, e.g. {@code limit} or {@code items[2].sku}. */
  private static String path(DatabindException e) {
    if (!(e instanceof JsonMappingException m)) {
      return "";
    }
    return m.getPath().stream()
        .map(r -> r.getFieldName() != null ? "." + r.getFieldName() : "[" + r.getIndex() + "]")
        .collect(Collectors.joining())
        .replaceFirst("^\\.", "");
  }
}
