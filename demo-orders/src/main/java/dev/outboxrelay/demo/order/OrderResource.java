package dev.outboxrelay.demo.order;

import dev.outboxrelay.demo.web.InvalidInputException;
import dev.outboxrelay.demo.web.Problem;
import dev.outboxrelay.demo.web.ProblemMappers;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.time.OffsetDateTime;

/**
 * Orders over HTTP.
 *
 * <ul>
 *   <li>{@code POST /orders} with {@code {"customer":"..","amountCents":123}}: writes the order and
 *       its billing job in one transaction; 201 with {@code {"id":..,"operationId":..}} and a
 *       {@code Location} header. Bad input is answered with 400 and a problem body naming the field
 *       ({@code customer}, {@code amountCents}, or {@code body} for unreadable JSON); nothing is
 *       committed then.
 *   <li>{@code GET /orders/{id}}: the order, or 404.
 * </ul>
 */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
public class OrderResource {

  /** Request body of {@code POST /orders}; boxed so that a missing value can be told apart. */
  public record OrderRequest(String customer, Long amountCents) {}

  /** Response body of {@code POST /orders}. */
  public record OrderCreated(long id, String operationId) {}

  /** Response body of {@code GET /orders/{id}}. */
  public record OrderView(
      long id, String customer, long amountCents, OffsetDateTime createdAt, String operationId) {}

  @Inject OrderService orders;

  /** Places an order; see the class comment. */
  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  public Response place(OrderRequest request, @Context UriInfo uri) {
    if (request == null) {
      throw new InvalidInputException(ProblemMappers.BODY, "a JSON object is required");
    }
    PlacedOrder placed = orders.place(request.customer(), request.amountCents());
    return Response.created(uri.getAbsolutePathBuilder().path(String.valueOf(placed.id())).build())
        .entity(new OrderCreated(placed.id(), placed.operationId()))
        .build();
  }

  /** Returns one order, or 404 with a problem body. */
  @GET
  @Path("/{id}")
  public Response get(@PathParam("id") long id) {
    return orders
        .find(id)
        .map(
            o ->
                Response.ok(
                        new OrderView(
                            o.getId(),
                            o.getCustomer(),
                            o.getAmountCents(),
                            o.getCreatedAt(),
                            Order.billingOperationId(o.getId())))
                    .build())
        .orElseGet(() -> Problem.notFound("no order " + id));
  }
}
