package dev.outboxrelay.relay.metrics;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver.Response;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The per-destination backlog gauges a running relay exports: a ready job held back behind an
 * earlier job of its ordering key shows as {@code outbox_destination_ready 1} with a growing age on
 * its destination only, and once the backlog drains both gauges are back to 0 (not stuck at their
 * last value).
 */
@QuarkusTest
@QuarkusTestResource(RelayTestResources.class)
class DestinationBacklogMetricsTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Inject
  @io.quarkus.agroal.DataSource("postgresql")
  AgroalDataSource ds;

  @Inject RelayService relay;

  /**
   * Jobs other test classes left waiting (held behind a key, say) would keep billing's backlog up.
   */
  @BeforeEach
  void clean() throws Exception {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      for (String table : List.of("outbox_attempt", "outbox_payload", "outbox_message")) {
        s.execute("DELETE FROM " + table);
      }
    }
  }

  @Test
  void aWaitingJobShowsOnItsDestinationAndTheGaugesDropToZeroOnceItDrains() throws Exception {
    RelayTestResources.receiver.reset();
    String key = "backlog-" + UUID.randomUUID();
    String first = key + "-first";
    String second = key + "-second";
    // The first job's send takes 4 s: meanwhile the second, same key, is due but must wait.
    RelayTestResources.receiver.script(first, Response.slow(4000));
    Outbox outbox = new Outbox(OutboxConfig.builder().destinations("billing").build());
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(c, message(first, key));
    }
    Awaitility.await()
        .atMost(WAIT)
        .until(() -> relay.admin().findByOperationId(first).orElseThrow().state() == 'W');
    try (Connection c = ds.getConnection()) {
      outbox.enqueue(c, message(second, key));
    }

    Awaitility.await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              String scrape = scrape();
              assertEquals(
                  1.0,
                  gauge(scrape, "outbox_destination_ready", "billing"),
                  "held back behind its key");
              assertTrue(
                  gauge(scrape, "outbox_destination_ready_oldest_age_seconds", "billing") > 0,
                  scrape);
              assertEquals(
                  0.0,
                  gauge(scrape, "outbox_destination_ready", "signed"),
                  "another destination has none");
              assertEquals(
                  0.0, gauge(scrape, "outbox_destination_ready_oldest_age_seconds", "signed"));
            });

    Awaitility.await()
        .atMost(WAIT)
        .until(() -> relay.admin().findByOperationId(second).orElseThrow().state() == 'S');
    Awaitility.await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              String scrape = scrape();
              assertEquals(0.0, gauge(scrape, "outbox_destination_ready", "billing"), "drained");
              assertEquals(
                  0.0,
                  gauge(scrape, "outbox_destination_ready_oldest_age_seconds", "billing"),
                  "drained");
            });
  }

  private static OutboxMessage message(String op, String key) {
    return OutboxMessage.builder()
        .operationId(op)
        .destination("billing")
        .orderingKey(key)
        .payload("{}")
        .build();
  }

  private static String scrape() {
    return given().get("/q/metrics").then().statusCode(200).extract().asString();
  }

  /**
   * The value of {@code name{destination=...,source="default"}}; fails when the series is absent.
   */
  private static double gauge(String scrape, String name, String destination) {
    String series = name + "{destination=\"" + destination + "\",source=\"default\"} ";
    for (String line : scrape.split("\n")) {
      if (line.startsWith(series)) {
        return Double.parseDouble(line.substring(series.length()).trim());
      }
    }
    throw new AssertionError("no series " + series);
  }
}
