package dev.outboxrelay.demo.sink;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.notNullValue;

import dev.outboxrelay.demo.DemoDatabase;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Paging through the sink's ledger, as reconciliation does. */
@QuarkusTest
class LedgerResourceTest {

  @Inject DemoDatabase db;

  @BeforeEach
  void setUp() {
    db.reset();
  }

  @Test
  void pagesFollowNextUntilNull() {
    for (String key : new String[] {"op-a", "op-b", "op-c"}) {
      given()
          .header("Idempotency-Key", key)
          .body("{}")
          .post("/sink/billing")
          .then()
          .statusCode(200);
    }

    String next =
        given()
            .queryParam("limit", 2)
            .get("/ledger")
            .then()
            .statusCode(200)
            .body("items.operationId", contains("op-a", "op-b"))
            .body("items.appliedCount", contains(1, 1))
            .body("items.deliveries", contains(1, 1))
            .body("items[0].appliedAt", notNullValue())
            .body("next", notNullValue())
            .extract()
            .path("next");

    given()
        .queryParam("limit", 2)
        .queryParam("since", next)
        .get("/ledger")
        .then()
        .statusCode(200)
        .body("items.operationId", contains("op-c"))
        .body("next", is((Object) null));
  }

  /**
   * Guards against losing entries at a page boundary: {@code next} is a timestamp, so a page that
   * ended between two entries applied at the same instant would skip the second one.
   */
  @Test
  void entriesAppliedAtTheSameInstantAreNeverSplitAcrossPages() {
    Instant t1 = Instant.parse("2030-01-01T00:00:01Z");
    Instant t2 = Instant.parse("2030-01-01T00:00:02Z");
    Instant t3 = Instant.parse("2030-01-01T00:00:03Z");
    insertLedgerRow("op-1", t1);
    insertLedgerRow("op-2a", t2);
    insertLedgerRow("op-2b", t2);
    insertLedgerRow("op-2c", t2);
    insertLedgerRow("op-3", t3);

    // The run at t2 would straddle the first page: the page stops before it.
    given()
        .queryParam("limit", 2)
        .get("/ledger")
        .then()
        .body("items.operationId", contains("op-1"))
        .body("next", is(t1.toString()));
    // The run at t2 is longer than a page: it comes whole.
    given()
        .queryParam("limit", 2)
        .queryParam("since", t1.toString())
        .get("/ledger")
        .then()
        .body("items.operationId", contains("op-2a", "op-2b", "op-2c"))
        .body("next", is(t2.toString()));
    given()
        .queryParam("limit", 2)
        .queryParam("since", t2.toString())
        .get("/ledger")
        .then()
        .body("items.operationId", contains("op-3"))
        .body("next", is((Object) null));
  }

  @ParameterizedTest
  @CsvSource({"limit, 0", "limit, 1001", "limit, ten", "since, yesterday"})
  void badQueryParameterIs400NamingIt(String parameter, String value) {
    given()
        .queryParam(parameter, value)
        .get("/ledger")
        .then()
        .statusCode(400)
        .contentType("application/problem+json")
        .body("field", is(parameter));
  }

  private void insertLedgerRow(String operationId, Instant appliedAt) {
    db.jdbc()
        .update(
            "INSERT INTO outbox_inbox (operation_id, destination, payload_sha256,"
                + " payload_bytes, applied_at, last_delivery_at, deliveries) VALUES (?, 'billing', ?, 2, ?, ?, 1)",
            operationId,
            "0".repeat(64),
            appliedAt,
            appliedAt);
  }
}
