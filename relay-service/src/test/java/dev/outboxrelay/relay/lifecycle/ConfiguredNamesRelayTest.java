package dev.outboxrelay.relay.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The relay on an outbox with configured names: {@code outbox.schema=relay_names_it}, {@code
 * outbox.table=orders}, while its PostgreSQL connections' own schema is {@code relay_it} (which
 * holds a default-named outbox). It migrates {@code relay_names_it.orders_*} at start-up, delivers
 * a job enqueued there to the HTTP receiver, leaves the default-named outbox alone, and is woken by
 * the renamed notification ({@code orders_ready}, payload the configured schema).
 */
@QuarkusTest
@TestProfile(ConfiguredNamesRelayTest.Named.class)
class ConfiguredNamesRelayTest {
  static final Duration WAIT = Duration.ofSeconds(30);
  static final OutboxTables TABLES = OutboxTables.of("relay_names_it", "orders");

  /** The relay with {@code outbox.schema} and {@code outbox.table} set. */
  public static class Named implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("outbox.schema", TABLES.schema().orElseThrow(), "outbox.table", TABLES.table());
    }

    @Override
    public List<TestResourceEntry> testResources() {
      return List.of(new TestResourceEntry(RelayTestResources.class));
    }
  }

  @Inject
  @io.quarkus.agroal.DataSource("postgresql")
  AgroalDataSource ds;

  @Inject RelayService relay;
  @Inject MeterRegistry registry;

  @Test
  void deliversFromTheConfiguredTablesAndIsWokenByTheirNotification() throws SQLException {
    assertEquals(TABLES, relay.tables());
    // The connection's schema holds a default-named outbox too, as a default relay would leave it.
    OutboxSchema.migrate(ds);
    Awaitility.await()
        .atMost(WAIT)
        .until(() -> relay.source(null).readyListenerState().equals("listening"));
    double wakeups = registry.find("outbox.claim.wakeups").counter().count();
    Outbox outbox =
        new Outbox(OutboxConfig.builder().destinations("billing").tables(relay.tables()).build());
    String op = "names-" + UUID.randomUUID();
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder()
              .operationId(op)
              .destination("billing")
              .payload("{\"order\":1}")
              .build());
    }

    Awaitility.await()
        .atMost(WAIT)
        .until(() -> !RelayTestResources.receiver.requestsFor(op).isEmpty());
    Awaitility.await()
        .atMost(WAIT)
        .until(() -> relay.admin().findByOperationId(op).map(StoredJob::state).orElse('?') == 'S');
    assertEquals(
        1, count("SELECT COUNT(*) FROM relay_names_it.orders_message WHERE operation_id = ?", op));
    assertEquals(
        1,
        count(
            "SELECT COUNT(*) FROM relay_names_it.orders_attempt a JOIN"
                + " relay_names_it.orders_message m ON m.id = a.message_id WHERE m.operation_id = ?",
            op));
    assertEquals(
        0,
        count("SELECT COUNT(*) FROM relay_it.outbox_message WHERE operation_id = ?", op),
        "nothing in the default-named outbox of the connection's schema");
    assertTrue(
        registry.find("outbox.claim.wakeups").counter().count() > wakeups,
        "woken by NOTIFY orders_ready with payload relay_names_it");
  }

  private long count(String sql, String op) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, op);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
