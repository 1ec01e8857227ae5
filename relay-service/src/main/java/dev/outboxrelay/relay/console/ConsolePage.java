package dev.outboxrelay.relay.console;

import static dev.outboxrelay.relay.web.Roles.OPERATOR;
import static dev.outboxrelay.relay.web.Roles.VIEWER;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * {@code GET /console} (roles {@code outbox-viewer}, {@code outbox-operator}): the console, one
 * static HTML page whose script reads {@link ConsoleResource}, the admin API and the reconciliation
 * report with the caller's login. Its Content-Security-Policy lets it load nothing from anywhere
 * but the relay.
 */
@Path("/console")
public class ConsolePage {
  static final String PAGE = "/web/console.html";

  @GET
  @Produces(MediaType.TEXT_HTML)
  @RolesAllowed({VIEWER, OPERATOR})
  public Response page() {
    try (InputStream in = ConsolePage.class.getResourceAsStream(PAGE)) {
      if (in == null) {
        throw new IllegalStateException(PAGE + " is missing from the relay's classpath");
      }
      return Response.ok(new String(in.readAllBytes(), StandardCharsets.UTF_8))
          .header("Cache-Control", "no-store")
          .header("X-Content-Type-Options", "nosniff")
          .header("Referrer-Policy", "no-referrer")
          .header(
              "Content-Security-Policy",
              "default-src 'none'; connect-src 'self'; img-src 'self' data:;"
                  + " script-src 'unsafe-inline'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self';"
                  + " frame-ancestors 'none'")
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
