package dev.outboxrelay.relay.metrics;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.relay.lifecycle.RelayService;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Every metric the Grafana dashboard and the alert rules under {@code src-docker/} query is one a
 * running relay exports: after a delivery and a reconciliation run, {@code /q/metrics} is scraped
 * and each name must be there (a renamed meter would otherwise leave an empty panel and an alert
 * that can never fire).
 */
@QuarkusTest
@QuarkusTestResource(RelayTestResources.class)
class ExportedMetricNamesTest {
  @Inject
  @io.quarkus.agroal.DataSource("postgresql")
  AgroalDataSource ds;

  @Inject RelayService relay;

  @Test
  void everyMetricTheDashboardAndTheRulesUseIsExported() throws Exception {
    RelayTestResources.receiver.reset();
    String op = "metrics-" + System.nanoTime();
    try (Connection c = ds.getConnection()) {
      new Outbox(OutboxConfig.builder().destinations("billing").build())
          .enqueue(
              c,
              OutboxMessage.builder().operationId(op).destination("billing").payload("{}").build());
    }
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> relay.admin().findByOperationId(op).orElseThrow().state() == 'S');
    given()
        .auth()
        .preemptive()
        .basic("operator", "operator-pw")
        .contentType("application/json")
        .body("")
        .post("/reconciliation/runs")
        .then()
        .statusCode(201);

    String scrape = given().get("/q/metrics").then().statusCode(200).extract().asString();
    Set<String> exported = new TreeSet<>();
    for (String line : scrape.split("\n")) {
      if (!line.isEmpty() && !line.startsWith("#")) {
        exported.add(line.split("[{ ]", 2)[0]);
      }
    }
    Set<String> used = MonitoringFiles.metricNamesUsed();
    assertTrue(used.size() >= 10, "the files use the relay's metrics: " + used);
    Set<String> missing = new TreeSet<>(used);
    missing.removeAll(exported);
    assertEquals(
        Set.of(),
        missing,
        "queried by src-docker's dashboard or rules but not exported by the relay");
  }
}
