package dev.outboxrelay.relay.reconciliation;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.relay.testing.Browser;
import dev.outboxrelay.relay.testing.BrowserPageTest;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver.Response;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;

/**
 * The report page for people, {@code GET /reconciliation}, opened in a real headless Chromium
 * (Debian's, driven by Selenium WebDriver through Debian's chromedriver): after two runs over jobs
 * that fall into several categories, the numbers, the items and the chart the page renders must be
 * exactly those of the JSON API, and its filters must narrow the table. Screenshots go to {@code
 * target/}.
 */
@QuarkusTest
@QuarkusTestResource(RelayTestResources.class)
class ReconciliationPageTest extends BrowserPageTest {
  @Test
  void thePageShowsExactlyWhatTheReportSaysAndFiltersItsItems() throws Exception {
    Instant start = admin.databaseNow().minusSeconds(60);
    receiver.script("dead-1", new Response(422, Map.of(), "{\"error\":\"amount missing\"}", 0));
    List<String> ops = List.of("ok-1", "ok-2", "ok-3", "twice-1", "dead-1");
    for (String op : ops) {
      try (Connection c = ds.getConnection()) {
        outbox.enqueue(
            c,
            OutboxMessage.builder()
                .operationId(op)
                .destination(DEST)
                .payload("{\"op\":\"" + op + "\"}")
                .build());
      }
    }
    Awaitility.await()
        .atMost(WAIT)
        .until(
            () ->
                ops.stream()
                    .allMatch(
                        op -> {
                          char state = admin.findByOperationId(op).orElseThrow().state();
                          return op.startsWith("dead") ? state == 'D' : state == 'S';
                        }));
    receiver.applyAgainInLedger("twice-1");
    receiver.confirmInLedger("ghost-1", DEST);
    receiver.confirmInLedger("ghost-2", DEST);
    String window =
        "{\"window_start\":\""
            + start
            + "\",\"window_end\":\""
            + admin.databaseNow().plusSeconds(60)
            + "\"}";
    for (int run = 0; run < 2; run++) {
      as("operator")
          .contentType("application/json")
          .body(window)
          .post("/reconciliation/runs")
          .then()
          .statusCode(201);
    }
    JsonPath report =
        as("viewer").get("/reconciliation/report").then().statusCode(200).extract().jsonPath();
    JsonPath runs =
        as("viewer")
            .get("/reconciliation/runs?limit=20")
            .then()
            .statusCode(200)
            .extract()
            .jsonPath();
    Map<String, Integer> counts = report.getMap("counts");
    assertTrue(
        counts.get("matched") >= 3
            && counts.get("duplicate_effects") == 1
            && counts.get("dead") == 1
            && counts.get("confirmed_not_sent") == 2,
        "the data covers several categories: " + counts);
    List<String> itemOps = report.getList("items.operation_id", String.class);

    // Only logged-in people see the page at all.
    given().get("/reconciliation").then().statusCode(401);
    given()
        .auth()
        .preemptive()
        .basic("nobody", "nobody-pw")
        .get("/reconciliation")
        .then()
        .statusCode(403);

    String page = page("viewer", "/reconciliation");
    Path shots = SCREENSHOTS;
    try (Browser chromium = Browser.start(1280, 1000)) {
      chromium.navigate(page);
      chromium.await("the loaded report", "document.body.dataset.loaded === 'true'", WAIT);
      assertEquals(String.valueOf(report.getLong("run_id")), chromium.find("#run-id").getText());
      Map<String, Integer> shown = new LinkedHashMap<>();
      for (WebElement card : chromium.findAll("[data-count]")) {
        shown.put(card.getAttribute("data-count"), Integer.valueOf(card.getText()));
      }
      assertEquals(counts, shown, "the cards show the report's counts");
      assertEquals(itemOps, rows(chromium), "the table lists the report's items in its order");
      assertEquals(String.valueOf(itemOps.size()), chromium.find("#total").getText());
      List<Long> runIds = new ArrayList<>();
      for (WebElement bar : chromium.findAll("#chart g[data-run]")) {
        runIds.add(Long.valueOf(bar.getAttribute("data-run")));
      }
      List<Long> expectedRuns = new ArrayList<>(runs.getList("runs.run_id", Long.class));
      expectedRuns.sort(null);
      assertEquals(expectedRuns, runIds, "one bar per recent run, oldest first");
      assertEquals(2, runIds.size());
      chromium.screenshot(shots.resolve("reconciliation-page.png"));

      // Filter to the dead jobs as a person would: the table narrows and the filter lands in the
      // address.
      new Select(chromium.find("#f-category")).selectByValue("dead");
      List<String> deadOps = new ArrayList<>();
      for (Map<String, Object> item : report.<Map<String, Object>>getList("items")) {
        if ("dead".equals(item.get("category"))) {
          deadOps.add((String) item.get("operation_id"));
        }
      }
      assertEquals(List.of("dead-1"), deadOps);
      assertEquals(deadOps, rows(chromium));
      assertEquals("?category=dead", chromium.text("location.search"));
      chromium.screenshot(shots.resolve("reconciliation-page-dead.png"));

      // Typing in the operation filter narrows further and lands in the address too.
      new Select(chromium.find("#f-category")).selectByValue("confirmed_not_sent");
      chromium.find("#f-operation").sendKeys("host-2");
      assertEquals(List.of("ghost-2"), rows(chromium));
      assertEquals(
          "?category=confirmed_not_sent&operation=host-2", chromium.text("location.search"));

      // A filtered address opens filtered, on its own.
      chromium.navigate(page + "?category=confirmed_not_sent&operation=ghost-1");
      chromium.await("the filtered report", "document.body.dataset.loaded === 'true'", WAIT);
      assertEquals(List.of("ghost-1"), rows(chromium));
    }
    assertTrue(Files.size(shots.resolve("reconciliation-page.png")) > 10_000, "a real screenshot");
  }

  private static List<String> rows(Browser chromium) {
    return chromium.findAll("#items tr[data-operation-id]").stream()
        .map(r -> r.getAttribute("data-operation-id"))
        .toList();
  }
}
