package dev.outboxrelay.relay.testing;

import dev.outboxrelay.outbox.testing.TestDatabases;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Prepares what a relay under test talks to: the PostgreSQL schema {@code relay_it} on the local
 * server, and a real HTTP receiver as the {@code billing} sink and as the {@code signed} sink (path
 * {@code /signed}, requests signed with {@link #SIGNED_SECRET}), and as the {@code ledgered} sink,
 * reconciled against the receiver's {@code /ledger} with re-drive and accept enabled.
 */
public class RelayTestResources implements QuarkusTestResourceLifecycleManager {
  /** The {@code signed} destination's HMAC secret. */
  public static final String SIGNED_SECRET = "relay-test-secret-4f1c";

  /** Shared with the tests, which script it. */
  public static RecordingHttpReceiver receiver;

  @Override
  public Map<String, String> start() {
    testSchema("relay_it");
    try {
      receiver = new RecordingHttpReceiver();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
    return Map.ofEntries(
        Map.entry("outbox.destinations.ledgered.type", "http"),
        Map.entry("outbox.destinations.ledgered.url", receiver.url("/ledgered").toString()),
        Map.entry("outbox.destinations.ledgered.confirmation.type", "http-ledger"),
        Map.entry(
            "outbox.destinations.ledgered.confirmation.url", receiver.url("/ledger").toString()),
        Map.entry("outbox.destinations.ledgered.reconcile.redrive-unconfirmed", "true"),
        Map.entry("outbox.destinations.ledgered.reconcile.accept-confirmed-not-sent", "true"),
        Map.entry("outbox.destinations.billing.type", "http"),
        Map.entry("outbox.destinations.billing.url", receiver.url("/billing").toString()),
        Map.entry("outbox.destinations.billing.request-timeout", "20s"),
        Map.entry("outbox.destinations.signed.type", "http"),
        Map.entry("outbox.destinations.signed.url", receiver.url("/signed").toString()),
        Map.entry("outbox.destinations.signed.hmac-secret", SIGNED_SECRET));
  }

  @Override
  public void stop() {
    if (receiver != null) {
      receiver.close();
    }
  }

  /** The schemas this JVM has already rebuilt: each is emptied once per test run. */
  private static final Set<String> FRESH = ConcurrentHashMap.newKeySet();

  /**
   * Gives {@code schema} on the test PostgreSQL ({@code -Doutbox.test.pg.url}, default
   * localhost/test) a fresh start the first time this JVM asks for it (dropped and created again,
   * later calls keep it); the JDBC URL of that database, without the schema. The database outlives
   * the run, so a schema kept from an earlier run would hold that run's jobs and the checksums of
   * its scripts: a migration edited since then (allowed until it is released) would fail the
   * relay's start with a checksum mismatch, which a fresh machine never sees.
   */
  public static String testSchema(String schema) {
    String url = System.getProperty("outbox.test.pg.url", TestDatabases.DEFAULT_PG_URL);
    String user = System.getProperty("outbox.test.pg.user", TestDatabases.DEFAULT_PG_USER);
    try (Connection c = DriverManager.getConnection(url, user, "");
        Statement s = c.createStatement()) {
      if (FRESH.add(schema)) {
        s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
      }
      s.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "PostgreSQL at " + url + " is required for relay tests: " + e.getMessage(), e);
    }
    return url;
  }
}
