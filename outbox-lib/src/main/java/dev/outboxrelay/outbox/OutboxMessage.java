package dev.outboxrelay.outbox;

import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
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
    headers =
        headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    deliverAfter = deliverAfter == null ? Duration.ZERO : deliverAfter;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Separates the business ID from the destination in a fan-out job's operation ID. */
  public static final String FAN_OUT_SEPARATOR = "/";

  /**
   * One business event to several destinations: one job per destination, each with this message's
   * payload, content type, ordering key, headers and delay, and the operation ID {@code
   * <businessId>/<destination>} (stable, so a retried business transaction yields the same IDs and
   * each sink deduplicates its own). Enqueue the result with {@link Outbox#enqueueAll} in the
   * business transaction: all jobs commit, or none.
   *
   * @param event the shared content; its operation ID and destination are ignored
   */
  public static List<OutboxMessage> fanOut(
      String businessId, OutboxMessage event, List<String> destinations) {
    if (businessId == null || businessId.isBlank()) {
      throw new InvalidMessageException(
          "operation_id", "fan-out needs a business ID, got '" + businessId + "'");
    }
    if (destinations == null || destinations.isEmpty()) {
      throw new InvalidMessageException("destination", "fan-out needs at least one destination");
    }
    if (new HashSet<>(destinations).size() != destinations.size()) {
      throw new InvalidMessageException(
          "destination", "fan-out destinations repeat: " + destinations);
    }
    return destinations.stream()
        .map(
            d ->
                new OutboxMessage(
                    businessId + FAN_OUT_SEPARATOR + d,
                    d,
                    event.payload(),
                    event.contentType(),
                    event.orderingKey(),
                    event.headers(),
                    event.deliverAfter()))
        .toList();
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

    /**
     * Stable ID of the business effect, e.g. {@code order-42/billing}: 1 to 200 printable ASCII
     * characters (U+0020 to U+007E, no space at either end), which an HTTP {@code Idempotency-Key},
     * an AMQP {@code message-id} and a Kafka header carry byte-for-byte. Anything else is refused
     * at enqueue ({@link InvalidCharacterException}); map other text to ASCII yourself (e.g.
     * percent-encode its UTF-8), the same way on every retry.
     */
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

    /** A media type, 1 to 100 printable ASCII characters (no space at either end). */
    public Builder contentType(String contentType) {
      this.contentType = contentType;
      return this;
    }

    /** Jobs sharing a key are delivered one at a time in id order. */
    public Builder orderingKey(String orderingKey) {
      this.orderingKey = orderingKey;
      return this;
    }

    /**
     * A header sent with the job: the name an HTTP token of at most 100 characters, the value
     * printable ASCII and tab (none at either end; may be empty), as RFC 9110 allows in a field
     * value and AMQP and Kafka carry unchanged.
     */
    public Builder header(String name, String value) {
      headers.put(name, value);
      return this;
    }

    public Builder headers(Map<String, String> all) {
      headers.putAll(all);
      return this;
    }

    /**
     * Not claimable before commit time + delay (database clock); from zero to {@link
     * OutboxConfig#MAX_DELIVER_AFTER} (five years). On a re-enqueue of the same job the first job's
     * delay stands.
     */
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
