package dev.outboxrelay.demo.sink;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.demo.DemoDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The demo sink: effects once per operation ID, however often and concurrently it is delivered. */
@QuarkusTest
class DemoSinkResourceTest {

  @Inject DemoDatabase db;

  private ExecutorService pool;

  @BeforeEach
  void setUp() {
    db.reset();
  }

  @AfterEach
  void tearDown() {
    if (pool != null) {
      pool.shutdownNow();
    }
  }

  @Test
  void firstDeliveryAppliesAndARepeatOnlyCounts() {
    deliver("order-1/billing", 11, 1)
        .statusCode(200)
        .body("operationId", is("order-1/billing"))
        .body("applied", is(true))
        .body("deliveries", is(1));

    deliver("order-1/billing", 11, 2)
        .statusCode(200)
        .body("operationId", is("order-1/billing"))
        .body("applied", is(false))
        .body("deliveries", is(2));

    assertEquals(1, db.invoices("order-1/billing"));
    given()
        .get("/ledger")
        .then()
        .statusCode(200)
        .body("items.size()", is(1))
        .body("items[0].operationId", is("order-1/billing"))
        .body("items[0].destination", is("billing"))
        .body("items[0].messageId", is(11))
        .body("items[0].deliveries", is(2))
        .body("items[0].appliedCount", is(1))
        .body("next", is((Object) null));
  }

  @Test
  void missingIdempotencyKeyIs400AndWritesNothing() {
    given()
        .contentType(ContentType.JSON)
        .body("{\"orderId\":1}")
        .post("/sink/billing")
        .then()
        .statusCode(400)
        .contentType("application/problem+json")
        .body("field", is("Idempotency-Key"));

    given().get("/ledger/summary").then().body("applied", is(0)).body("deliveries", is(0));
  }

  @Test
  void malformedMessageIdHeaderIs400() {
    given()
        .header("Idempotency-Key", "order-9/billing")
        .header("X-Outbox-Message-Id", "nine")
        .body("{}")
        .post("/sink/billing")
        .then()
        .statusCode(400)
        .body("field", is("X-Outbox-Message-Id"));

    assertEquals(0, db.invoices("order-9/billing"));
  }

  @Test
  void concurrentDeliveriesOfOneKeyApplyOnce() throws Exception {
    int deliveries = 8;
    pool = Executors.newFixedThreadPool(deliveries);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Receipt>> results = new ArrayList<>();
    for (int i = 1; i <= deliveries; i++) {
      int attempt = i;
      Callable<Receipt> delivery =
          () -> {
            start.await();
            return deliver("order-8/billing", 8, attempt)
                .statusCode(200)
                .extract()
                .as(Receipt.class);
          };
      results.add(pool.submit(delivery));
    }
    start.countDown();

    List<Receipt> receipts = new ArrayList<>();
    for (Future<Receipt> r : results) {
      receipts.add(r.get());
    }

    assertEquals(1, receipts.stream().filter(Receipt::applied).count());
    // Every delivery was counted exactly once: the counters seen are 1..8, each once.
    assertEquals(
        LongStream.rangeClosed(1, deliveries).boxed().toList(),
        receipts.stream().map(Receipt::deliveries).sorted().toList());
    assertEquals(1, db.invoices("order-8/billing"));
    given()
        .get("/ledger/summary")
        .then()
        .body("applied", is(1))
        .body("deliveries", is(deliveries))
        .body("redeliveries", is(deliveries - 1))
        .body("duplicateEffects", is(0));
  }

  @Test
  void summaryCountsRedeliveriesAndDuplicateEffects() {
    deliver("order-1/billing", 1, 1);
    deliver("order-1/billing", 1, 2);
    deliver("order-2/billing", 2, 1);

    given()
        .get("/ledger/summary")
        .then()
        .statusCode(200)
        .body("applied", is(2))
        .body("deliveries", is(3))
        .body("redeliveries", is(1))
        .body("duplicateEffects", is(0));

    // A second invoice for one operation ID, as a broken deduplication would leave behind.
    db.jdbc()
        .update(
            "INSERT INTO demo_invoice (operation_id, order_payload) VALUES (?, '{}')",
            "order-2/billing");

    given().get("/ledger/summary").then().body("duplicateEffects", is(1));
    // The ledger is the inbox, which applied it once; the business table's duplicate shows above.
    given()
        .get("/ledger")
        .then()
        .body("items.find { it.operationId == 'order-2/billing' }.appliedCount", is(1));
  }

  @Test
  void theSameKeyWithAnotherBodyIs409AndAppliesNothing() {
    deliver("order-3/billing", 3, 1).statusCode(200).body("applied", is(true));
    given()
        .header("Idempotency-Key", "order-3/billing")
        .contentType(ContentType.JSON)
        .body("{\"orderId\":4}")
        .post("/sink/billing")
        .then()
        .statusCode(409)
        .contentType("application/problem+json")
        .body("field", is("Idempotency-Key"));
    assertEquals(1, db.invoices("order-3/billing"));
    given().get("/ledger/summary").then().body("deliveries", is(1));
  }

  @Test
  void anOverlongKeyIs400AndWritesNothing() {
    given()
        .header("Idempotency-Key", "k".repeat(201))
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/sink/billing")
        .then()
        .statusCode(400)
        .body("field", is("Idempotency-Key"));
    given().get("/ledger/summary").then().body("applied", is(0)).body("deliveries", is(0));
  }

  private static ValidatableResponse deliver(String operationId, long messageId, int attempt) {
    return given()
        .header("Idempotency-Key", operationId)
        .header("X-Outbox-Message-Id", messageId)
        .header("X-Outbox-Attempt", attempt)
        .contentType(ContentType.JSON)
        .body("{\"orderId\":" + messageId + "}")
        .post("/sink/billing")
        .then();
  }

  /** The sink's response body. */
  record Receipt(String operationId, boolean applied, String outcome, long deliveries) {}
}
