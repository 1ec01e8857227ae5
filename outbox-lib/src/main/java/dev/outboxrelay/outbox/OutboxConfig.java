package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Producer-side settings. {@code destinations} lists the routes an application may enqueue to;
 * anything else is rejected at enqueue (a typo must not become a job that dies in the relay).
 */
public record OutboxConfig(Set<String> destinations, int maxPayloadBytes, OutboxDialect dialect) {

  /** 1 MiB of UTF-8: larger documents belong in storage, referenced from the payload. */
  public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

  public static final int MAX_OPERATION_ID_LENGTH = 200;
  public static final int MAX_DESTINATION_LENGTH = 200;
  public static final int MAX_ORDERING_KEY_LENGTH = 200;
  public static final int MAX_CONTENT_TYPE_LENGTH = 100;
  public static final int MAX_HEADERS_JSON_LENGTH = 8 * 1024;

  public OutboxConfig {
    destinations = Set.copyOf(destinations);
    if (destinations.isEmpty()) {
      throw new IllegalArgumentException("destinations: at least one destination must be configured");
    }
    for (String d : destinations) {
      if (!d.matches("[A-Za-z0-9][A-Za-z0-9._:-]{0," + (MAX_DESTINATION_LENGTH - 1) + "}")) {
        throw new IllegalArgumentException(
            "destinations: '" + d + "' is not a valid destination name (letters, digits, . _ : -)");
      }
    }
    if (maxPayloadBytes <= 0) {
      throw new IllegalArgumentException("maxPayloadBytes: must be positive, was " + maxPayloadBytes);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  public static final class Builder {
    private final Set<String> destinations = new LinkedHashSet<>();
    private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
    private OutboxDialect dialect;

    private Builder() {}

    public Builder destinations(String... names) {
      destinations.addAll(java.util.List.of(names));
      return this;
    }

    public Builder destinations(Collection<String> names) {
      destinations.addAll(names);
      return this;
    }

    public Builder maxPayloadBytes(int maxPayloadBytes) {
      this.maxPayloadBytes = maxPayloadBytes;
      return this;
    }

    /** Optional: skip detection from the connection's metadata. */
    public Builder dialect(OutboxDialect dialect) {
      this.dialect = dialect;
      return this;
    }

    public OutboxConfig build() {
      return new OutboxConfig(destinations, maxPayloadBytes, dialect);
    }
  }
}
