package dev.outboxrelay.outbox.inbox.jaxrs;

import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.WebhookVerifier;
import dev.outboxrelay.outbox.inbox.jta.TransactionalInbox;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.core.Response;
import java.sql.Connection;

/**
 * A ready-made webhook endpoint: extend it with a {@code @Path} and implement {@link #apply}; the
 * relay's HTTP sink {@code POST}s to that path. Nothing is registered unless an application extends
 * it. Behaviour and answers: {@link InboxWebhook}.
 *
 * <pre>{@code
 * @Path("/billing/deliveries")
 * public class BillingWebhook extends InboxWebhookResource {
 *   @ConfigProperty(name = "billing.webhook.secrets") List<String> secrets;
 *   protected String destination() { return "http:billing"; }
 *   protected WebhookVerifier verifier() { return WebhookVerifier.of(secrets, Duration.ofMinutes(5), Clock.systemUTC()); }
 *   protected String apply(Connection c, InboxDelivery d) throws SQLException { ...insert the invoice...; return "invoice 17"; }
 * }
 * }</pre>
 */
public abstract class InboxWebhookResource {
  @Inject TransactionalInbox inbox;

  private volatile InboxWebhook webhook;

  /** The relay's destination name whose deliveries arrive here (e.g. {@code http:billing}). */
  protected abstract String destination();

  /** The secrets and tolerance to check signatures with (called once). */
  protected abstract WebhookVerifier verifier();

  /**
   * The effect, on the inbox's connection; see {@link dev.outboxrelay.outbox.inbox.InboxHandler}.
   */
  protected abstract String apply(Connection connection, InboxDelivery delivery) throws Exception;

  @POST
  public Response deliver(
      @HeaderParam(InboxWebhook.IDEMPOTENCY_KEY) String idempotencyKey,
      @HeaderParam(WebhookSignature.HEADER) String signature,
      @HeaderParam(InboxWebhook.MESSAGE_ID) String messageId,
      byte[] body) {
    InboxWebhook w = webhook;
    if (w == null) {
      w = new InboxWebhook(inbox, verifier());
      webhook = w;
    }
    return w.receive(destination(), idempotencyKey, signature, messageId, body, this::apply);
  }
}
