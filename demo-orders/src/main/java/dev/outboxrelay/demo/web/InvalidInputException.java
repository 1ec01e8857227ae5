package dev.outboxrelay.demo.web;

/**
 * Request input that fails validation; answered with 400 naming {@link #field()}. Thrown before
 * anything is written, or inside the request's transaction (which then rolls back).
 */
public class InvalidInputException extends RuntimeException {
  private final String field;

  public InvalidInputException(String field, String detail) {
    super(detail);
    this.field = field;
  }

  /** The request field (JSON property, query parameter or header) that was rejected. */
  public String field() {
    return field;
  }
}
