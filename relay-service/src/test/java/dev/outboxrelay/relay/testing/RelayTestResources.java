package dev.outboxrelay.relay.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;

/**
 * Prepares what a relay under test talks to: the PostgreSQL schema {@code relay_it} on the
 * local server, and a real HTTP receiver as the {@code billing} sink and as the {@code signed}
 * sink (path {@code /signed}, requests signed with {@link #SIGNED_SECRET}).
 */
public class RelayTestResources implements QuarkusTestResourceLifecycleManager {
  /** The {@code signed} destination's HMAC secret. */
  public static final String SIGNED_SECRET = "relay-test-secret-4f1c";
  /** Shared with the tests, which script it. */
  public static RecordingHttpReceiver receiver;

  @Override
  public Map<String, String> start() {
    String url = System.getProperty("outbox.test.pg.url", "jdbc:postgresql://127.0.0.1:5432/test");
    String user = System.getProperty("outbox.test.pg.user", "postgres");
    try (Connection c = DriverManager.getConnection(url, user, "");
        Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA IF NOT EXISTS relay_it");
    } catch (SQLException e) {
      throw new IllegalStateException("PostgreSQL at " + url + " is required for relay tests: " + e.getMessage(), e);
    }
    try {
      receiver = new RecordingHttpReceiver();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
    return Map.of(
        "outbox.destinations.billing.type", "http",
        "outbox.destinations.billing.url", receiver.url("/billing").toString(),
        "outbox.destinations.billing.request-timeout", "20s",
        "outbox.destinations.signed.type", "http",
        "outbox.destinations.signed.url", receiver.url("/signed").toString(),
        "outbox.destinations.signed.hmac-secret", SIGNED_SECRET);
  }

  @Override
  public void stop() {
    if (receiver != null) {
      receiver.close();
    }
  }
}
