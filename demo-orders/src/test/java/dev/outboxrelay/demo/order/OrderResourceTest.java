package dev.outboxrelay.demo.order;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.emptyOrNullString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.demo.DemoDatabase;
import dev.outboxrelay.outbox.store.StoredJob;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.ExtractableResponse;
import io.restassured.response.Response;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@QuarkusTest
class OrderResourceTest {

  @Inject DemoDatabase db;
  @Inject ObjectMapper json;

  @Test
  void postWritesTheOrderAndOneBillingJob() throws Exception {
    long ordersBefore = db.orders();
    long jobsBefore = db.outboxJobs();

    ExtractableResponse<Response> created =
        placeOrder("{\"customer\":\"Ada\",\"amountCents\":1250}").statusCode(201).extract();
    int id = created.path("id");
    String operationId = "order-" + id + "/billing";
    assertEquals(operationId, created.path("operationId"));
    assertTrue(created.header("Location").endsWith("/orders/" + id), created.header("Location"));

    StoredJob job = db.outbox().findByOperationId(operationId).orElseThrow();
    assertEquals("billing", job.destination());
    assertEquals('R', job.state());
    assertEquals("application/json", job.contentType());
    JsonNode payload = json.readTree(job.payload());
    assertEquals(id, payload.get("orderId").asInt());
    assertEquals("Ada", payload.get("customer").asText());
    assertEquals(1250, payload.get("amountCents").asLong());
    assertEquals(ordersBefore + 1, db.orders());
    assertEquals(jobsBefore + 1, db.outboxJobs());

    given()
        .get(created.header("Location"))
        .then()
        .statusCode(200)
        .body("id", is(id))
        .body("customer", is("Ada"))
        .body("amountCents", is(1250))
        .body("createdAt", not(emptyOrNullString()))
        .body("operationId", is(operationId));
  }

  @Test
  void customerOf200CharactersIsAccepted() {
    int id =
        placeOrder("{\"customer\":\"" + "c".repeat(200) + "\",\"amountCents\":5}")
            .statusCode(201)
            .extract()
            .path("id");
    given().get("/orders/{id}", id).then().statusCode(200).body("customer.length()", is(200));
  }

  @Test
  void unknownOrderIs404() {
    given()
        .get("/orders/{id}", 987654321)
        .then()
        .statusCode(404)
        .contentType("application/problem+json")
        .body("status", is(404))
        .body("title", is("Not Found"));
  }

  static Stream<Arguments> badOrders() {
    return Stream.of(
        Arguments.of("missing customer", "{\"amountCents\":100}", "customer"),
        Arguments.of("null customer", "{\"customer\":null,\"amountCents\":100}", "customer"),
        Arguments.of("blank customer", "{\"customer\":\"   \",\"amountCents\":100}", "customer"),
        Arguments.of(
            "customer of 201 characters",
            "{\"customer\":\"" + "c".repeat(201) + "\",\"amountCents\":100}",
            "customer"),
        Arguments.of("missing amount", "{\"customer\":\"Ada\"}", "amountCents"),
        Arguments.of("zero amount", "{\"customer\":\"Ada\",\"amountCents\":0}", "amountCents"),
        Arguments.of("negative amount", "{\"customer\":\"Ada\",\"amountCents\":-5}", "amountCents"),
        Arguments.of(
            "amount not a number", "{\"customer\":\"Ada\",\"amountCents\":\"abc\"}", "amountCents"),
        Arguments.of(
            "fractional amount", "{\"customer\":\"Ada\",\"amountCents\":1.5}", "amountCents"),
        Arguments.of(
            "amount beyond a long",
            "{\"customer\":\"Ada\",\"amountCents\":99999999999999999999999}",
            "amountCents"),
        Arguments.of("truncated JSON", "{\"customer\":\"Ada\",", "body"),
        Arguments.of("not JSON", "customer=Ada", "body"),
        Arguments.of("JSON array", "[1,2]", "body"),
        Arguments.of("empty body", "", "body"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badOrders")
  void badInputIs400NamingTheFieldAndWritesNothing(String name, String body, String field) {
    long ordersBefore = db.orders();
    long jobsBefore = db.outboxJobs();

    placeOrder(body)
        .statusCode(400)
        .contentType("application/problem+json")
        .body("type", is("about:blank"))
        .body("title", is("Bad Request"))
        .body("status", is(400))
        .body("field", is(field))
        .body("detail", not(emptyOrNullString()));

    assertEquals(ordersBefore, db.orders());
    assertEquals(jobsBefore, db.outboxJobs());
  }

  private static ValidatableResponse placeOrder(String body) {
    return given().contentType(ContentType.JSON).body(body).post("/orders").then();
  }
}
