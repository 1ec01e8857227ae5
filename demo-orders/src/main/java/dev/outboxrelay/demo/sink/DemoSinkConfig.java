package dev.outboxrelay.demo.sink;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** The demo sink's settings, under {@code demo.sink.*}. */
@ConfigMapping(prefix = "demo.sink")
public interface DemoSinkConfig {
  /**
   * Shared secret of the relay's {@code outbox.destinations.<name>.hmac-secret}; when set, every
   * delivery must carry a valid {@code X-Outbox-Signature} or is answered 401 and not applied.
   * Never logged.
   */
  Optional<String> hmacSecret();

  /**
   * The secret being retired while rotating: a delivery signed with either secret is accepted.
   * Needs {@code hmac-secret}. Never logged.
   */
  Optional<String> previousHmacSecret();

  /** How far a signature's timestamp may lie from this clock, either way. */
  @WithDefault("5m")
  Duration signatureTolerance();
}
