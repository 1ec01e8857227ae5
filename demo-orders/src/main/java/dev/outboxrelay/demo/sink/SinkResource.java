package dev.outboxrelay.demo.sink;

import dev.outboxrelay.demo.web.InvalidInputException;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.nio.charset.StandardCharsets;

/**
 * The demo sink's delivery endpoint, {@code POST /sink/{destination}}, called by the relay's
 * HTTP sink. Any body is accepted and stored as the invoice's payload.
 *
 * <p>Headers: {@code Idempotency-Key} (required, at most 200 characters: the operation ID),
 * {@code X-Outbox-Message-Id} and {@code X-Outbox-Attempt} (optional numbers, logged and the
 * message id kept in the ledger). A missing key or a malformed number is answered with 400 naming
 * the header.
 *
 * <p>When {@code demo.sink.hmac-secret} is set, a delivery must carry a valid {@code
 * X-Outbox-Signature} over its raw body; a missing, malformed, wrong or stale one is answered 401
 * ({@code application/problem+json} naming the reason) before anything is read or applied.
 *
 * <p>Answers 200 with {@code {"operationId":..,"applied":true|false,"deliveries":n}}: {@code
 * applied=false} is a repeat, still a success for the sender.
 */
@Path("/sink")
public class SinkResource {
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  public static final String MESSAGE_ID = "X-Outbox-Message-Id";
  public static final String ATTEMPT = "X-Outbox-Attempt";
  static final int MAX_KEY_LENGTH = 200;

  @Inject SinkLedger ledger;
  @Inject SinkSignatureVerifier signatures;

  /** Applies a delivery once per idempotency key; see the class comment. */
  @POST
  @Path("/{destination}")
  @Produces(MediaType.APPLICATION_JSON)
  public SinkReceipt deliver(
      @PathParam("destination") String destination,
      @HeaderParam(IDEMPOTENCY_KEY) String idempotencyKey,
      @HeaderParam(MESSAGE_ID) String messageId,
      @HeaderParam(ATTEMPT) String attempt,
      @HeaderParam(WebhookSignature.HEADER) String signature,
      byte[] rawBody) {
    // First: an unauthenticated request learns nothing about its other headers.
    signatures.check(signature, rawBody);
    String body = new String(rawBody, StandardCharsets.UTF_8);
    if (idempotencyKey == null || idempotencyKey.isBlank()) {
      throw new InvalidInputException(IDEMPOTENCY_KEY, IDEMPOTENCY_KEY + " header is required");
    }
    if (idempotencyKey.length() > MAX_KEY_LENGTH) {
      throw new InvalidInputException(IDEMPOTENCY_KEY, IDEMPOTENCY_KEY + " is "
          + idempotencyKey.length() + " characters long; the limit is " + MAX_KEY_LENGTH);
    }
    return ledger.deliver(new Delivery(
        idempotencyKey,
        destination,
        optionalNumber(MESSAGE_ID, messageId),
        optionalNumber(ATTEMPT, attempt),
        body));
  }

  private static Long optionalNumber(String header, String value) {
    if (value == null || value.isBlank()) {
      return null;
    }
    try {
      return Long.valueOf(value.strip());
    } catch (NumberFormatException e) {
      throw new InvalidInputException(header, header + " must be a number, was '" + value + "'");
    }
  }
}
