package dev.outboxrelay.relay.console;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.relay.source.RelayInstance;
import dev.outboxrelay.relay.testing.Browser;
import dev.outboxrelay.relay.testing.BrowserPageTest;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver.Response;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * The console, {@code GET /console}, in a real headless Chromium driven by Selenium: every number
 * and row it shows is compared with the JSON API; an operator filters, replays a dead job, cancels
 * the job that holds an ordering key back and bulk-replays dead jobs through the page (dry-run
 * count first); a viewer sees no action and is refused if they force one; hostile operation IDs,
 * headers and payloads come out as text. Screenshots go to {@code target/screenshots}.
 */
@QuarkusTest
@QuarkusTestResource(RelayTestResources.class)
class ConsolePageTest extends BrowserPageTest {
  static final String HOSTILE_OP = "<img src=x onerror=\"window.__pwned=1\">'\"&amp;";
  static final String HOSTILE_HEADER = "<script>window.__pwned=2</script>";
  static final String HOSTILE_PAYLOAD =
      "</pre><b id=\"injected\">bold</b><script>window.__pwned=3</script>";

  final Outbox byReference =
      new Outbox(OutboxConfig.builder().destinations(DEST).inlinePayloadBytes(64).build());

  @Test
  void operatorsSeeExactlyWhatTheApiSaysAndActThroughItViewersOnlyLook() throws Exception {
    for (String op : List.of("dead-a", "dead-b", HOSTILE_OP)) {
      receiver.script(op, new Response(422, Map.of(), "{\"error\":\"amount missing\"}", 0));
    }
    for (String op : List.of("ok-1", "ok-2", "ok-3", "dead-a", "dead-b")) {
      enqueue(
          outbox,
          OutboxMessage.builder()
              .operationId(op)
              .destination(DEST)
              .payload("{\"op\":\"" + op + "\"}"));
    }
    enqueue(
        outbox,
        OutboxMessage.builder()
            .operationId(HOSTILE_OP)
            .destination(DEST)
            .payload(HOSTILE_PAYLOAD)
            .contentType("text/plain")
            .header("X-Note", HOSTILE_HEADER)
            .header("Authorization", "Bearer do-not-show-4711"));
    String bigBody = "{\"lines\":\"" + "x".repeat(300) + "\"}";
    enqueue(
        byReference,
        OutboxMessage.builder().operationId("big-1").destination(DEST).payload(bigBody));
    enqueue(
        outbox,
        OutboxMessage.builder()
            .operationId("hold-first")
            .destination(DEST)
            .orderingKey("acct-7")
            .payload("{}")
            .deliverAfter(Duration.ofHours(1)));
    enqueue(
        outbox,
        OutboxMessage.builder()
            .operationId("hold-second")
            .destination(DEST)
            .orderingKey("acct-7")
            .payload("{}"));
    Awaitility.await()
        .atMost(WAIT)
        .until(
            () ->
                state("ok-1") == 'S'
                    && state("ok-2") == 'S'
                    && state("ok-3") == 'S'
                    && state("big-1") == 'S'
                    && state("dead-a") == 'D'
                    && state("dead-b") == 'D'
                    && state(HOSTILE_OP) == 'D');
    assertEquals('R', state("hold-second"), "the later job of acct-7 waits for the earlier one");
    long holdFirst = id("hold-first");
    long holdSecond = id("hold-second");
    long deadA = id("dead-a");
    long hostile = id(HOSTILE_OP);

    // Only logged-in people see the console; roles as in the admin API.
    given().get("/console").then().statusCode(401);
    given().auth().preemptive().basic("nobody", "nobody-pw").get("/console").then().statusCode(403);

    Path shots = SCREENSHOTS;
    try (Browser browser = Browser.start(1360, 1000)) {
      // ---- overview: every number from the API ------------------------------------------------
      console(browser, "operator", "");
      JsonPath stats = as("viewer").get("/admin/stats").then().statusCode(200).extract().jsonPath();
      JsonPath overview =
          as("viewer").get("/admin/console/overview").then().statusCode(200).extract().jsonPath();
      Map<String, Object> byState = stats.getMap("by_state");
      for (String st : List.of("R", "W", "S", "C", "D")) {
        long expected = byState.containsKey(st) ? ((Number) byState.get(st)).longValue() : 0;
        assertEquals(
            String.valueOf(expected),
            browser.find("[data-count='default:" + st + "']").getText(),
            "state " + st + " as GET /admin/stats counts it");
      }
      Map<String, Map<String, Object>> byDestination = stats.getMap("by_destination");
      for (WebElement row : browser.findAll("table.destinations tbody tr")) {
        String d = row.getAttribute("data-destination");
        Map<String, Object> counts = byDestination.getOrDefault(d, Map.of());
        for (String st : List.of("R", "W", "S", "C", "D")) {
          long expected = counts.containsKey(st) ? ((Number) counts.get(st)).longValue() : 0;
          assertEquals(
              String.valueOf(expected),
              row.findElement(org.openqa.selenium.By.cssSelector("[data-dest-count='" + st + "']"))
                  .getText(),
              d + " " + st);
        }
      }
      // hold-second waits behind hold-first: its destination's oldest-ready age, rendered before
      // the
      // API call above, is no older than the API's and not zero; the source's is the same job's.
      double pageAge =
          Double.parseDouble(
              browser.find("[data-dest-oldest-ready='" + DEST + "']").getText().replace(" s", ""));
      double apiAge =
          overview.getDouble("sources[0].oldest_ready_age_seconds_by_destination['" + DEST + "']");
      assertTrue(
          pageAge > 0 && pageAge <= apiAge + 0.1, "page " + pageAge + " s, API " + apiAge + " s");
      assertEquals(
          overview.getDouble("sources[0].oldest_ready_age_seconds"),
          apiAge,
          0.5,
          "the source's only waiting job is " + DEST + "'s");
      assertEquals(
          java.util.Set.of(DEST),
          overview.getMap("sources[0].oldest_ready_age_seconds_by_destination").keySet(),
          "only destinations with a waiting job");
      assertEquals(
          String.valueOf(overview.getLong("sources[0].dead_last_hour")),
          browser.find("[data-dead-hour='default']").getText());
      assertEquals(3L, overview.getLong("sources[0].dead_last_hour"));
      assertEquals("UP", browser.find("[data-up='source:default']").getText());
      assertEquals(
          "No reconciliation run has finished yet.", browser.find("#no-reconciliation").getText());
      assertNotPwned(browser);
      browser.screenshot(shots.resolve("console-overview.png"));

      // ---- a filter, typed into the form, lands in the address and matches the API ------------
      console(browser, "operator", "?view=jobs");
      new Select(browser.find("#f-state")).selectByValue("D");
      browser.find("#f-operation_id").sendKeys("dead-");
      browser.find("#apply").click();
      browser.await(
          "the filtered list",
          "document.body.dataset.loaded === 'true' && location.search.includes('state=D')",
          WAIT);
      assertEquals("?view=jobs&state=D&operation_id=dead-", browser.text("location.search"));
      List<Long> expectedIds =
          as("viewer")
              .get("/admin/console/jobs?state=D&operation_id=dead-")
              .then()
              .statusCode(200)
              .extract()
              .jsonPath()
              .getList("messages.id", Long.class);
      List<Long> fromAdmin = new ArrayList<>();
      for (Map<String, Object> m :
          as("viewer")
              .get("/admin/messages?state=D")
              .then()
              .statusCode(200)
              .extract()
              .jsonPath()
              .<Map<String, Object>>getList("messages")) {
        if (((String) m.get("operation_id")).contains("dead-")) {
          fromAdmin.add(((Number) m.get("id")).longValue());
        }
      }
      assertEquals(fromAdmin, expectedIds, "the console's filter agrees with the admin listing");
      assertEquals(expectedIds, rowIds(browser));
      assertEquals(2, expectedIds.size());

      // ---- error class and time range: typed into the form, applied by the database -----------
      Instant died = admin.databaseNow();
      console(browser, "operator", "?view=jobs");
      browser.find("#f-error_class").sendKeys("HTTP 422");
      browser.find("#f-from").sendKeys(died.minusSeconds(3600).toString());
      browser.find("#f-to").sendKeys(died.plusSeconds(60).toString());
      browser.find("#apply").click();
      browser.await(
          "the list by error class and time",
          "document.body.dataset.loaded === 'true'"
              + " && location.search.includes('error_class=')",
          WAIT);
      String search = browser.text("location.search");
      assertTrue(
          search.contains("error_class=HTTP+422")
              && search.contains("from=")
              && search.contains("to="),
          search);
      List<Long> byClassAndTime =
          as("viewer")
              .queryParam("error_class", "HTTP 422")
              .queryParam("from", died.minusSeconds(3600).toString())
              .queryParam("to", died.plusSeconds(60).toString())
              .get("/admin/console/jobs")
              .then()
              .statusCode(200)
              .extract()
              .jsonPath()
              .getList("messages.id", Long.class);
      assertEquals(
          List.of(deadA, id("dead-b"), hostile),
          byClassAndTime,
          "the three jobs that died of a 422");
      assertEquals(byClassAndTime, rowIds(browser));
      // The same address a colleague pastes opens the same list; a range after their deaths has
      // none.
      console(browser, "viewer", search);
      assertEquals(byClassAndTime, rowIds(browser));
      console(
          browser, "operator", "?view=jobs&error_class=HTTP%20422&from=" + died.plusSeconds(3600));
      assertTrue(rowIds(browser).isEmpty());
      assertEquals("No job matches these filters.", browser.find("#no-jobs").getText());

      // ---- hostile strings are text: the dead list, the job page ------------------------------
      console(browser, "operator", "?view=jobs&state=D");
      WebElement hostileRow = browser.find("#jobs tr[data-id='" + hostile + "']");
      assertEquals(HOSTILE_OP, hostileRow.getAttribute("data-operation-id"));
      assertEquals(
          HOSTILE_OP,
          hostileRow.findElement(org.openqa.selenium.By.cssSelector("td.op")).getText());
      assertNotPwned(browser);
      browser.screenshot(shots.resolve("console-dead-jobs.png"));
      console(browser, "operator", "?view=job&id=" + hostile);
      assertEquals(HOSTILE_OP, browser.find("#operation-id").getText());
      assertEquals(HOSTILE_PAYLOAD, browser.find("#payload").getText());
      Map<String, String> headers = new LinkedHashMap<>();
      for (WebElement row : browser.findAll("#headers tr")) {
        headers.put(
            row.findElement(org.openqa.selenium.By.tagName("th")).getText(),
            row.findElement(org.openqa.selenium.By.tagName("td")).getText());
      }
      assertEquals(
          as("viewer")
              .get("/admin/messages/" + hostile)
              .then()
              .extract()
              .jsonPath()
              .getMap("message.headers"),
          headers,
          "headers as the API shows them");
      assertEquals(HOSTILE_HEADER, headers.get("X-Note"));
      assertEquals("(redacted)", headers.get("Authorization"));
      assertFalse(browser.text("document.body.innerHTML").contains("do-not-show-4711"));
      assertTrue(browser.findAll("#injected").isEmpty(), "no element came from the payload");
      assertEquals(1, browser.findAll("#attempts tr[data-attempt]").size());
      assertNotPwned(browser);

      // ---- a by-reference body loads on demand, with its size ---------------------------------
      console(browser, "operator", "?view=job&id=" + id("big-1"));
      assertTrue(browser.findAll("#payload").isEmpty(), "the body is not loaded until asked for");
      assertEquals(
          "(" + bigBody.length() + " bytes, stored by reference)",
          browser.find("#payload-size").getText());
      browser.find("#load-body").click();
      browser.await("the loaded body", "document.getElementById('payload') !== null", WAIT);
      assertEquals(bigBody, browser.find("#payload").getText());

      // ---- replay one dead job through the page; a refused one says why in words ---------------
      console(browser, "operator", "?view=job&id=" + deadA);
      List<String> instances =
          browser.findAll("#attempts td.relay-instance").stream().map(WebElement::getText).toList();
      assertEquals(
          as("viewer")
              .get("/admin/messages/" + deadA)
              .then()
              .statusCode(200)
              .extract()
              .jsonPath()
              .getList("attempts.relay_instance", String.class),
          instances,
          "each attempt's relay, as the API says");
      assertEquals(List.of(RelayInstance.NAME), instances, "this relay made the one attempt");
      browser.screenshot(shots.resolve("console-job.png"));
      browser.find("#replay").click();
      browser.await(
          "the replay's result",
          "document.getElementById('action-result').textContent !== ''",
          WAIT);
      assertEquals("Done: replay by operator, D → R.", browser.find("#action-result").getText());
      Awaitility.await().atMost(WAIT).until(() -> state("dead-a") == 'S');
      console(browser, "operator", "?view=job&id=" + id("ok-1"));
      browser.find("#replay").click();
      browser.await(
          "the refusal", "document.getElementById('action-result').textContent !== ''", WAIT);
      String refusal = browser.find("#action-result").getText();
      assertTrue(
          refusal.startsWith(
              "Refused, the job is not in a state for this (409): message "
                  + id("ok-1")
                  + " is S (sent), not D (dead)"),
          refusal);

      // ---- the job holding an ordering key back is named; cancelling it lets the key go on ----
      console(browser, "operator", "?view=job&id=" + holdSecond);
      assertEquals("#" + holdFirst, browser.find("#held-back-by").getText());
      assertEquals(
          holdFirst,
          as("viewer")
              .get("/admin/console/jobs/" + holdSecond)
              .then()
              .statusCode(200)
              .extract()
              .jsonPath()
              .getLong("held_back_by.id"));
      browser.find("#held-back-by").click();
      browser.await(
          "the earlier job",
          "document.body.dataset.loaded === 'true' && location.search.includes('id="
              + holdFirst
              + "')",
          WAIT);
      browser.find("#cancel-reason").sendKeys("blocks acct-7");
      browser.find("#cancel").click();
      browser.await(
          "the cancel's result",
          "document.getElementById('action-result').textContent !== ''",
          WAIT);
      assertEquals("Done: cancel by operator, R → D.", browser.find("#action-result").getText());
      Awaitility.await().atMost(WAIT).until(() -> state("hold-second") == 'S');

      // ---- bulk replay by filter: the dry-run count first, then the confirmation --------------
      console(browser, "operator", "?view=jobs&state=D&destination=" + DEST);
      browser.find("#bulk-count").click();
      browser.await("the dry run", "document.getElementById('bulk-matched') !== null", WAIT);
      long dryRun =
          as("operator")
              .contentType("application/json")
              .body("{\"destination\":\"" + DEST + "\",\"dry_run\":true}")
              .post("/admin/messages/replay")
              .then()
              .statusCode(200)
              .extract()
              .jsonPath()
              .getLong("matched");
      assertEquals(3, dryRun, "dead-b, the hostile job and the cancelled hold-first");
      assertEquals(
          String.valueOf(dryRun), browser.find("#bulk-matched").getAttribute("data-matched"));
      browser.screenshot(shots.resolve("console-bulk-replay.png"));
      browser.find("#bulk-go").click();
      browser.await(
          "the bulk replay's result",
          "document.getElementById('bulk-result').textContent !== ''",
          WAIT);
      assertEquals(
          "Replayed 3 of 3 matched dead job(s); they are ready (R) again.",
          browser.find("#bulk-result").getText());
      Awaitility.await()
          .atMost(WAIT)
          .until(() -> state("dead-b") == 'S' && state(HOSTILE_OP) == 'S');

      // ---- a viewer: the same pages, no action, and a forced action is refused ----------------
      console(browser, "viewer", "?view=job&id=" + id("dead-b"));
      assertTrue(
          browser.findAll("#actions, #replay, #cancel").isEmpty(),
          "a viewer sees no action buttons");
      assertEquals("viewer · viewer (read only)", browser.find("#who").getText());
      browser.screenshot(shots.resolve("console-viewer.png"));
      console(browser, "viewer", "?view=jobs&state=D");
      assertTrue(browser.findAll("#bulk, #bulk-count").isEmpty());
      Object forced =
          browser
              .driver()
              .executeAsyncScript(
                  "const done = arguments[arguments.length - 1];"
                      + " fetch(location.origin + '/admin/messages/"
                      + deadA
                      + "/replay', {method: 'POST', credentials: 'same-origin'})"
                      + ".then(r => done(r.status), e => done(String(e)));");
      assertEquals(403L, forced);
      as("viewer").post("/admin/messages/" + deadA + "/replay").then().statusCode(403);
      as("viewer")
          .contentType("application/json")
          .body("{\"all\":true,\"dry_run\":false}")
          .post("/admin/messages/replay")
          .then()
          .statusCode(403);
    }
    assertTrue(Files.size(shots.resolve("console-overview.png")) > 10_000, "a real screenshot");
  }

  /** A browser on another site cannot make an operator's browser act: its POST is refused. */
  @Test
  void crossSiteBrowserPostsAreRefused() {
    as("operator")
        .header("Origin", "http://evil.example")
        .post("/admin/messages/1/replay")
        .then()
        .statusCode(403);
    as("operator")
        .header("Sec-Fetch-Site", "cross-site")
        .post("/admin/messages/1/replay")
        .then()
        .statusCode(403);
    // Not a browser (no Origin): the admin API answers as before.
    as("operator").post("/admin/messages/999999/replay").then().statusCode(404);
  }

  @Test
  void badFiltersAreRefusedNamingTheField() {
    refusedNaming("from", as("viewer").queryParam("from", "yesterday"));
    refusedNaming("stat", as("viewer").queryParam("stat", "D"));
    refusedNaming(
        "to",
        as("viewer")
            .queryParam("from", "2024-01-02T00:00:00Z")
            .queryParam("to", "2024-01-01T00:00:00Z"));
    refusedNaming("error_class", as("viewer").queryParam("error_class", "x".repeat(301)));
    refusedNaming("operation_id", as("viewer").queryParam("operation_id", "a\nb"));
    refusedNaming("operation_id", as("viewer").queryParam("operation_id", "a", "b"));
    refusedNaming("to", as("viewer").queryParam("to", "2024-13-01T00:00:00Z"));
    refusedNaming("from", as("viewer").queryParam("from", "0999-12-31T00:00:00Z"));
    // LIKE wildcards and quotes in "contains" are text: no job contains them, none is listed.
    as("viewer")
        .queryParam("operation_id", "%' OR '1'='1")
        .get("/admin/console/jobs")
        .then()
        .statusCode(200)
        .body("messages", org.hamcrest.Matchers.empty());
    as("viewer")
        .get("/admin/console/jobs/abc")
        .then()
        .statusCode(400)
        .body("field", org.hamcrest.Matchers.equalTo("id"));
    as("viewer").get("/admin/console/jobs/424242").then().statusCode(404);
  }

  /** The jobs list refuses {@code request}'s filter with a 400 naming {@code field}. */
  private static void refusedNaming(String field, RequestSpecification request) {
    request
        .get("/admin/console/jobs")
        .then()
        .statusCode(400)
        .body("field", org.hamcrest.Matchers.equalTo(field));
  }

  /** Opens the console with {@code query} as {@code user}. */
  private void console(Browser browser, String user, String query) {
    open(browser, user, "/console" + query);
  }

  private static void assertNotPwned(Browser browser) {
    assertNull(
        browser.script("return window.__pwned === undefined ? null : window.__pwned;"),
        "no script from the data ran");
  }

  private static List<Long> rowIds(Browser browser) {
    return browser.findAll("#jobs tr[data-id]").stream()
        .map(r -> Long.valueOf(r.getAttribute("data-id")))
        .toList();
  }
}
