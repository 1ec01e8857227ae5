package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.jaxrs.InboxWebhook;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;

/**
 * The demo sink's delivery endpoint, {@code POST /sink/{destination}}, called by the relay's HTTP
 * sink: outbox-lib's {@link InboxWebhook} with the invoice as the effect. Any body is accepted and
 * stored as the invoice's payload. Headers, checks and answers: {@link InboxWebhook} ({@code
 * Idempotency-Key} required; 200 with {@code applied=false} for a repeat; 401 for a bad signature
 * when {@code demo.sink.hmac-secret} is set; 409 for an ID reused with another body).
 */
@Path("/sink")
public class SinkResource {
  public static final String ATTEMPT = "X-Outbox-Attempt";
  private static final Logger LOG = Logger.getLogger(SinkResource.class);

  @Inject SinkWebhook sink;
  @Inject Invoices invoices;

  @POST
  @Path("/{destination}")
  public Response deliver(
      @PathParam("destination") String destination,
      @HeaderParam(InboxWebhook.IDEMPOTENCY_KEY) String idempotencyKey,
      @HeaderParam(InboxWebhook.MESSAGE_ID) String messageId,
      @HeaderParam(ATTEMPT) String attempt,
      @HeaderParam(WebhookSignature.HEADER) String signature,
      byte[] rawBody) {
    Response r =
        sink.webhook()
            .receive(destination, idempotencyKey, signature, messageId, rawBody, invoices::apply);
    LOG.infof(
        "sink %s: operation %s message %s attempt %s: HTTP %d",
        destination, idempotencyKey, messageId, attempt, r.getStatus());
    return r;
  }
}
