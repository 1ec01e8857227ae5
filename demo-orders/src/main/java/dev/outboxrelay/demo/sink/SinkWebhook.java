package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.WebhookVerifier;
import dev.outboxrelay.outbox.inbox.jaxrs.InboxWebhook;
import dev.outboxrelay.outbox.inbox.jta.TransactionalInbox;
import dev.outboxrelay.outbox.webhook.WebhookSignature;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * The sink's webhook on outbox-lib's inbox ({@code outbox_inbox}, migrated at start-up by {@code
 * DemoSchemaMigrator}): checks signatures with {@code demo.sink.hmac-secret} (and {@code
 * previous-hmac-secret} while rotating) when set; accepts unsigned deliveries otherwise.
 */
@Startup
@ApplicationScoped
public class SinkWebhook {
  private static final Logger LOG = Logger.getLogger(SinkWebhook.class);
  static final String SECRET_KEY = "demo.sink.hmac-secret";
  static final String PREVIOUS_SECRET_KEY = "demo.sink.previous-hmac-secret";

  @Inject DemoSinkConfig config;
  @Inject TransactionalInbox inbox;
  private InboxWebhook webhook;

  @PostConstruct
  void init() {
    List<String> secrets = new ArrayList<>();
    secret(SECRET_KEY, config.hmacSecret().orElse(null)).ifPresent(secrets::add);
    Optional<String> previous =
        secret(PREVIOUS_SECRET_KEY, config.previousHmacSecret().orElse(null));
    if (previous.isPresent() && secrets.isEmpty()) {
      throw new IllegalArgumentException(PREVIOUS_SECRET_KEY + " is set without " + SECRET_KEY);
    }
    previous.ifPresent(secrets::add);
    if (config.signatureTolerance().isNegative()) {
      throw new IllegalArgumentException(
          "demo.sink.signature-tolerance must be >= 0, was " + config.signatureTolerance());
    }
    WebhookVerifier verifier =
        secrets.isEmpty()
            ? WebhookVerifier.unsigned()
            : WebhookVerifier.of(secrets, config.signatureTolerance(), Clock.systemUTC());
    webhook = new InboxWebhook(inbox, verifier);
    LOG.infof(
        "demo sink: %s",
        secrets.isEmpty()
            ? "accepting unsigned deliveries"
            : "requiring "
                + WebhookSignature.HEADER
                + " ("
                + secrets.size()
                + " secret(s), tolerance "
                + config.signatureTolerance()
                + ")");
  }

  /** The config mapping reads "key=" as unset: refuse it, or the sink would accept anything. */
  private static Optional<String> secret(String key, String value) {
    String raw = ConfigProvider.getConfig().getConfigValue(key).getRawValue();
    if ((value == null && raw != null) || (value != null && value.isBlank())) {
      throw new IllegalArgumentException(
          key
              + " is set but empty: set a secret, or remove the key"
              + " to accept unsigned deliveries");
    }
    return Optional.ofNullable(value);
  }

  public InboxWebhook webhook() {
    return webhook;
  }
}
