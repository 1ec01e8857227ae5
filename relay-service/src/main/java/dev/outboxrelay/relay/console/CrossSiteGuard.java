package dev.outboxrelay.relay.console;

import dev.outboxrelay.relay.web.Problem;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.Response.Status;
import java.net.URI;
import java.util.Set;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses a state-changing request that a browser sent from another site. A browser keeps the HTTP
 * Basic login of the console and would send it with a form another page posts to the admin API;
 * such a request carries {@code Sec-Fetch-Site: cross-site} or an {@code Origin} that is not the
 * relay's own. Clients that are not browsers (curl, scripts) send neither and pass.
 */
public class CrossSiteGuard {
  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS");

  @ServerRequestFilter(preMatching = true)
  public Response refuseCrossSite(ContainerRequestContext request) {
    if (SAFE.contains(request.getMethod())) {
      return null;
    }
    String site = request.getHeaderString("Sec-Fetch-Site");
    if (site != null && (site.equals("cross-site") || site.equals("same-site"))) {
      return refuse("Sec-Fetch-Site: " + site);
    }
    String origin = request.getHeaderString("Origin");
    if (origin != null) {
      URI own = request.getUriInfo().getBaseUri();
      String expected = own.getScheme() + "://" + own.getAuthority();
      String host = request.getHeaderString("Host");
      boolean same =
          origin.equals(expected)
              || (host != null
                  && (origin.equals("http://" + host) || origin.equals("https://" + host)));
      if (!same) {
        return refuse("Origin " + origin);
      }
    }
    return null;
  }

  private static Response refuse(String why) {
    return Problem.response(
        Status.FORBIDDEN,
        "a browser sent this request from another site ("
            + why
            + "): the relay acts only on requests from its own pages or from clients that are not browsers",
        null);
  }
}
