package dev.outboxrelay.demo.web;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DatabindException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.outboxrelay.outbox.DuplicateOperationException;
import dev.outboxrelay.outbox.InvalidMessageException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Exception mappers that turn bad input into problem responses. Each runs after the resource
 * method's transaction has rolled back, so nothing of a rejected request is committed.
 */
public class ProblemMappers {
  private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

  /** Field name used when the body as a whole cannot be read (no JSON, wrong JSON type). */
  public static final String BODY = "body";

  @ServerExceptionMapper
  public Response invalidInput(InvalidInputException e) {
    return Problem.badRequest(e.field(), e.getMessage());
  }

  /**
   * The outbox rejected the job: 400 naming the job's field; 409 when the operation ID already
   * names a different job (the request may be fine; the stored state conflicts with it).
   */
  @ServerExceptionMapper
  public Response invalidMessage(InvalidMessageException e) {
    Status status = e instanceof DuplicateOperationException ? Status.CONFLICT : Status.BAD_REQUEST;
    return Problem.response(status, e.getMessage(), e.field());
  }

  /**
   * JSON of the wrong shape: a missing or mistyped value ({@code "amountCents":"abc"}), or a body
   * that is not an object. Replaces Quarkus' built-in mapper for this exact type.
   */
  @ServerExceptionMapper
  public Response mismatchedJson(MismatchedInputException e) {
    return jsonProblem(e);
  }

  /**
   * Syntactically broken JSON: the Jackson body reader wraps it in a plain {@link
   * WebApplicationException} (400) whose cause is the parse error. Other web exceptions (404 for an
   * unknown path, 405, 415, ...) keep their own response.
   */
  @ServerExceptionMapper
  public Response webApplication(WebApplicationException e) {
    if (e.getCause() instanceof JacksonException jackson) {
      return jsonProblem(jackson);
    }
    return e.getResponse();
  }

  private static Response jsonProblem(JacksonException e) {
    String field = e instanceof DatabindException d ? path(d) : "";
    return Problem.badRequest(
        field.isEmpty() ? BODY : field,
        "request body is not valid JSON: " + e.getOriginalMessage());
  }

  /** The JSON path of the failing value, e.g. {@code amountCents} or {@code items[2].sku}. */
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
