package dev.outboxrelay.outbox.inbox.jaxrs;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.inbox.InboxConflictException;
import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InboxHandler;
import dev.outboxrelay.outbox.inbox.InboxHandlerException;
import dev.outboxrelay.outbox.inbox.InboxReceipt;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import dev.outboxrelay.outbox.inbox.WebhookVerifier;
import dev.outboxrelay.outbox.inbox.jta.TransactionalInbox;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One webhook delivery from the relay's HTTP sink, received once: the JAX-RS side of {@link
 * TransactionalInbox}. Call {@link #receive} from a resource method of any path (see {@link
 * InboxWebhookResource} for a ready-made one).
 *
 * <p>In this order, each refusal before anything is read further or written:
 *
 * <ol>
 *   <li>{@value WebhookSignature#HEADER} checked over the raw body against one or two secrets
 *       ({@link WebhookVerifier}): missing, malformed, wrong, stale or future: <b>401</b>.
 *   <li>{@code Idempotency-Key} missing, blank, over 200 characters, or a malformed {@code
 *       X-Outbox-Message-Id}: <b>400</b> naming the header; a body over the limit: <b>413</b>.
 *   <li>Received once in its own transaction, committed before the answer: <b>200</b> {@code
 *       {"operationId","applied":true|false,"outcome","deliveries"}}; {@code applied=false} is a
 *       repeat, a success for the sender too.
 *   <li>The ID was applied with another body: <b>409</b>, nothing written.
 *   <li>The handler threw {@code TransientFailureException}, or the database failed: <b>503</b>
 *       with {@code Retry-After} (the handler's, else {@value #DEFAULT_RETRY_AFTER_SECONDS} s),
 *       nothing recorded. {@code RejectedDeliveryException}: <b>422</b> (the relay does not retry
 *       it). Any other handler exception: <b>500</b> (retried), nothing recorded.
 * </ol>
 *
 * Refusals are {@code application/problem+json} with {@code field} naming what was refused.
 */
public final class InboxWebhook {
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  public static final String MESSAGE_ID = "X-Outbox-Message-Id";
  public static final String PROBLEM_JSON = "application/problem+json";
  public static final int DEFAULT_RETRY_AFTER_SECONDS = 30;
  private static final System.Logger LOG = System.getLogger(InboxWebhook.class.getName());

  private final TransactionalInbox inbox;
  private final WebhookVerifier verifier;

  public InboxWebhook(TransactionalInbox inbox, WebhookVerifier verifier) {
    this.inbox = inbox;
    this.verifier = verifier;
  }

  /**
   * Receives one delivery to {@code destination}; the arguments are the request's headers (null
   * when absent) and raw body.
   */
  public Response receive(
      String destination,
      String idempotencyKey,
      String signature,
      String messageId,
      byte[] body,
      InboxHandler handler) {
    byte[] raw = body == null ? new byte[0] : body;
    WebhookSignature.Verification v = verifier.verify(signature, raw);
    if (!v.valid()) {
      LOG.log(System.Logger.Level.WARNING, "webhook to {0} refused: {1}", destination, v.detail());
      return problem(401, v.reason() + ": " + v.detail(), WebhookSignature.HEADER);
    }
    if (idempotencyKey == null || idempotencyKey.isBlank()) {
      return problem(400, IDEMPOTENCY_KEY + " header is required", IDEMPOTENCY_KEY);
    }
    Long id = null;
    if (messageId != null && !messageId.isBlank()) {
      try {
        id = Long.valueOf(messageId.strip());
      } catch (NumberFormatException e) {
        return problem(400, MESSAGE_ID + " must be a number, was '" + messageId + "'", MESSAGE_ID);
      }
    }
    InboxDelivery delivery = new InboxDelivery(idempotencyKey, destination, raw, id);
    try {
      inbox.inbox().validate(delivery);
      InboxReceipt r = inbox.receive(delivery, handler);
      Map<String, Object> answer = new LinkedHashMap<>();
      answer.put("operationId", r.operationId());
      answer.put("applied", r.applied());
      answer.put("outcome", r.outcome());
      answer.put("deliveries", r.deliveries());
      return Response.ok(answer, "application/json").build();
    } catch (InvalidDeliveryException e) {
      return switch (e.field()) {
        case "operationId" ->
            problem(400, e.getMessage().replace("operationId", IDEMPOTENCY_KEY), IDEMPOTENCY_KEY);
        case "payload" -> problem(413, e.getMessage(), "body");
        default -> problem(400, e.getMessage(), e.field());
      };
    } catch (InboxConflictException e) {
      return problem(409, e.getMessage(), IDEMPOTENCY_KEY);
    } catch (InboxHandlerException e) {
      if (e.isTransient()) {
        return unavailable(e.getMessage(), e.retryAfter().orElse(null));
      }
      if (e.isRejection()) {
        return problem(422, e.getCause().getMessage(), null);
      }
      LOG.log(System.Logger.Level.ERROR, "webhook handler of " + destination + " failed", e);
      return problem(500, e.getMessage(), null);
    } catch (OutboxStoreException e) {
      LOG.log(System.Logger.Level.WARNING, "webhook to " + destination + ": database failed", e);
      return unavailable("the receiver's database failed: " + e.getMessage(), null);
    }
  }

  private static Response unavailable(String detail, Duration retryAfter) {
    long seconds =
        retryAfter == null ? DEFAULT_RETRY_AFTER_SECONDS : Math.max(1, retryAfter.toSeconds());
    return Response.fromResponse(problem(503, detail, null)).header("Retry-After", seconds).build();
  }

  /** An RFC 9457 problem response; {@code field} may be null. */
  public static Response problem(int status, String detail, String field) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("type", "about:blank");
    Response.Status s = Response.Status.fromStatusCode(status);
    body.put("title", s == null ? "HTTP " + status : s.getReasonPhrase());
    body.put("status", status);
    body.put("detail", detail);
    if (field != null) {
      body.put("field", field);
    }
    return Response.status(status).type(PROBLEM_JSON).entity(body).build();
  }
}
