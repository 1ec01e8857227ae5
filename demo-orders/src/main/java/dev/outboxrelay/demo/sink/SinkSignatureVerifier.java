package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.webhook.WebhookSignature;
import io.quarkus.runtime.Startup;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * Checks {@code X-Outbox-Signature} on sink deliveries when {@code demo.sink.hmac-secret} is set;
 * lets everything through otherwise. Validated at start-up.
 */
@Startup
@ApplicationScoped
public class SinkSignatureVerifier {
  private static final Logger LOG = Logger.getLogger(SinkSignatureVerifier.class);
  static final String SECRET_KEY = "demo.sink.hmac-secret";

  @Inject DemoSinkConfig config;

  private byte[] secret;
  private Clock clock = Clock.systemUTC();

  @PostConstruct
  void init() {
    // The config mapping reads "key=" as unset: catch it, or the sink would silently accept anything.
    String raw = ConfigProvider.getConfig().getConfigValue(SECRET_KEY).getRawValue();
    if ((config.hmacSecret().isEmpty() && raw != null) || config.hmacSecret().map(String::isBlank).orElse(false)) {
      throw new IllegalArgumentException(SECRET_KEY + " is set but empty: set a secret, or remove the key"
          + " to accept unsigned deliveries");
    }
    if (config.signatureTolerance().isNegative()) {
      throw new IllegalArgumentException("demo.sink.signature-tolerance must be >= 0, was "
          + config.signatureTolerance());
    }
    secret = config.hmacSecret().map(s -> s.getBytes(StandardCharsets.UTF_8)).orElse(null);
    LOG.infof("demo sink: %s", secret == null ? "accepting unsigned deliveries"
        : "requiring " + WebhookSignature.HEADER + " (tolerance " + config.signatureTolerance() + ")");
  }

  /** Whether deliveries must be signed. */
  public boolean required() {
    return secret != null;
  }

  /**
   * Passes when no secret is configured or the signature is valid over {@code body}.
   *
   * @throws SignatureRejectedException naming the reason otherwise
   */
  public void check(String header, byte[] body) {
    if (secret == null) {
      return;
    }
    WebhookSignature.Verification v = WebhookSignature.verify(secret, header, body, clock.instant(),
        config.signatureTolerance());
    if (!v.valid()) {
      throw new SignatureRejectedException(v);
    }
  }
}
