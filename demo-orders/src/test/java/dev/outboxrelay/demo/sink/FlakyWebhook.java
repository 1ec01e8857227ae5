package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.RejectedDeliveryException;
import dev.outboxrelay.outbox.inbox.TransientFailureException;
import dev.outboxrelay.outbox.inbox.WebhookVerifier;
import dev.outboxrelay.outbox.inbox.jaxrs.InboxWebhookResource;
import jakarta.inject.Inject;
import jakarta.ws.rs.Path;
import java.sql.Connection;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * A test receiver on outbox-lib's ready-made {@link InboxWebhookResource}: two secrets (a
 * rotation), and a handler whose body says how it fails. It writes its invoice first, so a failure
 * that recorded anything would leave one behind.
 */
@Path("/test-webhook")
public class FlakyWebhook extends InboxWebhookResource {
  static final String NEW_SECRET = "rotated-in-secret";
  static final String OLD_SECRET = "rotated-out-secret";
  static final String DESTINATION = "http:flaky";

  @Inject Invoices invoices;

  @Override
  protected String destination() {
    return DESTINATION;
  }

  @Override
  protected WebhookVerifier verifier() {
    return WebhookVerifier.of(
        List.of(NEW_SECRET, OLD_SECRET), Duration.ofMinutes(5), Clock.systemUTC());
  }

  @Override
  protected String apply(Connection connection, InboxDelivery delivery) throws Exception {
    String outcome = invoices.apply(connection, delivery);
    return switch (delivery.payloadText()) {
      case "transient" ->
          throw new TransientFailureException("stock service down", Duration.ofSeconds(7));
      case "transient-no-hint" -> throw new TransientFailureException("stock service down", null);
      case "reject" -> throw new RejectedDeliveryException("no such customer");
      case "bug" -> throw new IllegalStateException("a bug in the handler");
      default -> outcome;
    };
  }
}
