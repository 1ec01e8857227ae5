package dev.outboxrelay.outbox;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One job to deliver: an operation ID (the sink's idempotency key), a destination (a sink route
 * configured in the relay), a payload and optional ordering key, headers and delay. Immutable;
 * build with {@link #builder()}. Validation happens at {@link Outbox#enqueue}, where the
 * configuration (known destinations, payload limit) is known.
 */
public record OutboxMessage(
    String operationId,
    String destination,
    String payload,
    String contentType,
    String orderingKey,
    Map<String, String> headers,
    Duration deliverAfter) {

  public static final String DEFAULT_CONTENT_TYPE = "application/json";

  public OutboxMessage {
    headers = headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    deliverAfter = deliverAfter == null ? Duration.ZERO : deliverAfter;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Builder; {@code contentType} defaults to {@value #DEFAULT_CONTENT_TYPE}. */
  public static final class Builder {
    private String operationId;
    private String destination;
    private String payload;
    private String contentType = DEFAULT_CONTENT_TYPE;
    private String orderingKey;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private Duration deliverAfter = Duration.ZERO;

    private Builder() {}

    /** Stable ID of the business effect, e.g. {@code order-42/billing}; at most 200 characters. */
    public Builder operationId(String operationId) {
      this.operationId = operationId;
      return this;
    }

    /** Name of a destination configured in the relay ({@code outbox.destinations.<name>}). */
    public Builder destination(String destination) {
      this.destination = destination;
      return this;
    }

    public Builder payload(String payload) {
      this.payload = payload;
      return this;
    }

    public Builder contentType(String contentType) {
      this.contentType = contentType;
      return this;
    }

    /** Jobs sharing a key are delivered one at a time in id order. */
    public Builder orderingKey(String orderingKey) {
      this.orderingKey = orderingKey;
      return this;
    }

    public Builder header(String name, String value) {
      headers.put(name, value);
      return this;
    }

    public Builder headers(Map<String, String> all) {
      headers.putAll(all);
      return this;
    }

    /** Not claimable before commit time + delay (database clock). */
    public Builder deliverAfter(Duration delay) {
      this.deliverAfter = delay;
      return this;
    }

    public OutboxMessage build() {
      return new OutboxMessage(
          operationId, destination, payload, contentType, orderingKey, headers, deliverAfter);
    }
  }
}
