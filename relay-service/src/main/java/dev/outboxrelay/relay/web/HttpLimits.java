package dev.outboxrelay.relay.web;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The two refusals that happen before any resource is chosen, answered as {@link Problem}s like
 * every other refusal instead of Vert.x's and Quarkus' empty bodies:
 *
 * <ul>
 *   <li>414 for a request line (method, path and query) longer than {@value #MAX_REQUEST_LINE}
 *       characters. The HTTP decoder itself accepts lines up to {@code
 *       quarkus.http.limits.max-initial-line-length} (application.properties: 64K) so that this
 *       filter sees them; a line beyond that is still refused by the decoder, with an empty 414.
 *   <li>413 for a {@code Content-Length} over {@code quarkus.http.limits.max-body-size}: the same
 *       check as Quarkus' own (which runs just after this one), the connection is closed after the
 *       answer so the unread body is never read. A body sent without {@code Content-Length}
 *       (chunked) that grows over the limit is still cut off by the body reader with an empty 413.
 * </ul>
 */
@ApplicationScoped
public class HttpLimits {
  /** Longest request line answered normally: the HTTP decoder's default limit. */
  public static final int MAX_REQUEST_LINE = 4096;

  /** Just before Quarkus' own body-size check (RouteConstants.ROUTE_ORDER_UPLOAD_LIMIT = -2). */
  static final int ORDER = -3;

  private static final ObjectMapper JSON = new ObjectMapper();

  @ConfigProperty(name = "quarkus.http.limits.max-body-size")
  Optional<MemorySize> maxBodySize;

  void install(@Observes Router router) {
    Long maxBody = maxBodySize.map(MemorySize::asLongValue).orElse(null);
    router.route().order(ORDER).handler(rc -> check(rc, maxBody));
  }

  private static void check(RoutingContext rc, Long maxBody) {
    HttpServerRequest request = rc.request();
    int lineLength =
        request.method().name().length() + 1 + request.uri().length() + " HTTP/1.1".length();
    if (lineLength > MAX_REQUEST_LINE) {
      refuse(
          rc,
          414,
          "URI Too Long",
          "the request line is "
              + lineLength
              + " characters long, over the "
              + MAX_REQUEST_LINE
              + " accepted: shorten the query",
          null,
          false);
      return;
    }
    String length = request.getHeader(HttpHeaders.CONTENT_LENGTH);
    if (maxBody != null && length != null) {
      long declared;
      try {
        declared = Long.parseLong(length.strip());
      } catch (NumberFormatException e) {
        declared = -1; // the HTTP decoder refuses a malformed Content-Length itself
      }
      if (declared > maxBody) {
        refuse(
            rc,
            413,
            "Content Too Large",
            "the request body is "
                + declared
                + " bytes, over the "
                + maxBody
                + " accepted (quarkus.http.limits.max-body-size)",
            "body",
            true);
        return;
      }
    }
    rc.next();
  }

  private static void refuse(
      RoutingContext rc, int status, String title, String detail, String field, boolean close) {
    String body;
    try {
      body =
          JSON.writeValueAsString(new Problem("about:blank", title, status, detail, field, null));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    var response =
        rc.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE);
    if (close) {
      response.putHeader(HttpHeaders.CONNECTION, "close");
      response.endHandler(done -> rc.request().connection().close());
    }
    response.end(body);
  }
}
