package dev.outboxrelay.demo.report;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;

import dev.outboxrelay.demo.DemoDatabase;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The end-to-end report, with the relay played by the test: deliveries go straight to the sink. */
@QuarkusTest
class DemoReportResourceTest {

  @Inject DemoDatabase db;

  @BeforeEach
  void setUp() {
    db.reset();
  }

  @Test
  void everyOrderIsLostUntilItsBillingJobIsDelivered() {
    List<String> operationIds =
        IntStream.rangeClosed(1, 3).mapToObj(i -> placeOrder("Customer " + i, 100 * i)).toList();

    given()
        .get("/demo/report")
        .then()
        .statusCode(200)
        .body("orders", is(3))
        .body("outbox.R", is(3))
        .body("outbox.W", is(0))
        .body("outbox.S", is(0))
        .body("outbox.C", is(0))
        .body("outbox.D", is(0))
        .body("applied", is(0))
        .body("redeliveries", is(0))
        .body("duplicates", is(0))
        .body("lost", is(3))
        .body("lostOperationIds", contains(operationIds.toArray()));

    deliver(operationIds.get(1));

    given()
        .get("/demo/report")
        .then()
        .body("applied", is(1))
        .body("lost", is(2))
        .body("lostOperationIds", contains(operationIds.get(0), operationIds.get(2)));

    deliver(operationIds.get(0));
    deliver(operationIds.get(2));
    deliver(operationIds.get(2)); // a redelivery: counted, not applied again

    given()
        .get("/demo/report")
        .then()
        .body("orders", is(3))
        .body("outbox.R", is(3)) // no relay here: the jobs stay ready
        .body("applied", is(3))
        .body("redeliveries", is(1))
        .body("duplicates", is(0))
        .body("lost", is(0))
        .body("lostOperationIds", empty());
  }

  @Test
  void lostOperationIdsListsTheFirst20() {
    List<String> operationIds =
        IntStream.rangeClosed(1, 21).mapToObj(i -> placeOrder("Customer " + i, i)).toList();

    given()
        .get("/demo/report")
        .then()
        .body("lost", is(21))
        .body("lostOperationIds", contains(operationIds.subList(0, 20).toArray()));
  }

  private static String placeOrder(String customer, int amountCents) {
    return given()
        .contentType(ContentType.JSON)
        .body("{\"customer\":\"" + customer + "\",\"amountCents\":" + amountCents + "}")
        .post("/orders")
        .then()
        .statusCode(201)
        .extract()
        .path("operationId");
  }

  private static void deliver(String operationId) {
    given()
        .header("Idempotency-Key", operationId)
        .contentType(ContentType.JSON)
        .body("{}")
        .post("/sink/billing")
        .then()
        .statusCode(200);
  }
}
