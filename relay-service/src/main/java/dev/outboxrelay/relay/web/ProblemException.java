package dev.outboxrelay.relay.web;

import jakarta.ws.rs.core.Response.Status;

/**
 * A request the service refuses, answered as a {@link Problem} by {@link ProblemMappers}. Thrown
 * before anything is written (bad input) or after a conditional update changed nothing (conflict),
 * so a refused request never leaves anything half done.
 */
public class ProblemException extends RuntimeException {
  private final Status status;
  private final String field;

  public ProblemException(Status status, String field, String detail) {
    super(detail);
    this.status = status;
    this.field = field;
  }

  /** 400: {@code field} is malformed or out of range. */
  public static ProblemException badRequest(String field, String detail) {
    return new ProblemException(Status.BAD_REQUEST, field, detail);
  }

  /** 404: what {@code field} names does not exist. */
  public static ProblemException notFound(String field, String detail) {
    return new ProblemException(Status.NOT_FOUND, field, detail);
  }

  /** 409: the request is well formed but the stored state does not allow it now. */
  public static ProblemException conflict(String field, String detail) {
    return new ProblemException(Status.CONFLICT, field, detail);
  }

  public Status status() {
    return status;
  }

  /** The rejected request field, or null. */
  public String field() {
    return field;
  }
}
