package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Producer-side settings. {@code destinations} lists the routes an application may enqueue to;
 * anything else is rejected at enqueue (a typo must not become a job that dies in the relay).
 *
 * <p>Payload sizes, in UTF-8 bytes: a payload up to {@code inlinePayloadBytes} is stored in its
 * job's row; a larger one, up to {@code maxPayloadBytes}, is stored out of band in {@code
 * outbox_payload} (same transaction) and its row holds a short reference, so that job rows and the
 * relay's claim stay small; the relay loads the body just before the send. Anything larger is
 * rejected: it belongs in the application's own tables or blob store, with only a reference to it
 * in the payload (docs/library.md "Large payloads").
 */
public record OutboxConfig(
    Set<String> destinations,
    int maxPayloadBytes,
    int inlinePayloadBytes,
    Dialect dialect,
    OutboxTables tables) {

  /** 1 MiB of UTF-8: larger documents belong in storage, referenced from the payload. */
  public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

  /**
   * 64 KiB of UTF-8: larger payloads go to {@code outbox_payload}, so a claim of 32 jobs returns at
   * most about 2 MiB of payload however large the bodies are. Capped at {@code maxPayloadBytes}
   * when that is configured smaller and the threshold is not set.
   */
  public static final int DEFAULT_INLINE_PAYLOAD_BYTES = 64 * 1024;

  public static final int MAX_OPERATION_ID_LENGTH = 200;
  public static final int MAX_DESTINATION_LENGTH = 200;
  public static final int MAX_ORDERING_KEY_LENGTH = 200;
  public static final int MAX_CONTENT_TYPE_LENGTH = 100;
  public static final int MAX_HEADERS_JSON_LENGTH = 8 * 1024;

  /**
   * The longest {@code deliverAfter} delay: 1830 days, five years. Far enough for yearly renewals
   * and multi-year reminders, far inside every supported database's time range (SQL Server's and
   * MariaDB's end in 9999) and its millisecond arithmetic, and refused at enqueue beyond it, before
   * the connection is touched. A job due further ahead belongs in the application's own tables
   * until it comes due.
   */
  public static final Duration MAX_DELIVER_AFTER = Duration.ofDays(5 * 366);

  public OutboxConfig {
    destinations = Set.copyOf(destinations);
    tables = tables == null ? OutboxTables.DEFAULT : tables;
    if (destinations.isEmpty()) {
      throw new IllegalArgumentException(
          "destinations: at least one destination must be configured");
    }
    for (String d : destinations) {
      if (!d.matches("[A-Za-z0-9][A-Za-z0-9._:-]{0," + (MAX_DESTINATION_LENGTH - 1) + "}")) {
        throw new IllegalArgumentException(
            "destinations: '" + d + "' is not a valid destination name (letters, digits, . _ : -)");
      }
    }
    if (maxPayloadBytes <= 0) {
      throw new IllegalArgumentException(
          "maxPayloadBytes: must be positive, was " + maxPayloadBytes);
    }
    if (inlinePayloadBytes <= 0) {
      throw new IllegalArgumentException(
          "inlinePayloadBytes: must be positive, was " + inlinePayloadBytes);
    }
    if (inlinePayloadBytes > maxPayloadBytes) {
      throw new IllegalArgumentException(
          "inlinePayloadBytes: must not exceed maxPayloadBytes ("
              + maxPayloadBytes
              + "), was "
              + inlinePayloadBytes);
    }
  }

  /** Settings for the default-named tables. */
  public OutboxConfig(
      Set<String> destinations, int maxPayloadBytes, int inlinePayloadBytes, Dialect dialect) {
    this(destinations, maxPayloadBytes, inlinePayloadBytes, dialect, OutboxTables.DEFAULT);
  }

  /** Settings with the default inline threshold (capped at {@code maxPayloadBytes}). */
  public OutboxConfig(Set<String> destinations, int maxPayloadBytes, Dialect dialect) {
    this(destinations, maxPayloadBytes, defaultInline(maxPayloadBytes), dialect);
  }

  private static int defaultInline(int maxPayloadBytes) {
    // A non-positive maximum is reported by the canonical constructor, naming maxPayloadBytes.
    return maxPayloadBytes <= 0
        ? DEFAULT_INLINE_PAYLOAD_BYTES
        : Math.min(DEFAULT_INLINE_PAYLOAD_BYTES, maxPayloadBytes);
  }

  public static Builder builder() {
    return new Builder();
  }

  public static final class Builder {
    private final Set<String> destinations = new LinkedHashSet<>();
    private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
    private Integer inlinePayloadBytes;
    private Dialect dialect;
    private OutboxTables tables = OutboxTables.DEFAULT;

    private Builder() {}

    public Builder destinations(String... names) {
      destinations.addAll(List.of(names));
      return this;
    }

    public Builder destinations(Collection<String> names) {
      destinations.addAll(names);
      return this;
    }

    /** The hard limit on a payload's UTF-8 size; default {@link #DEFAULT_MAX_PAYLOAD_BYTES}. */
    public Builder maxPayloadBytes(int maxPayloadBytes) {
      this.maxPayloadBytes = maxPayloadBytes;
      return this;
    }

    /**
     * Payloads larger than this many UTF-8 bytes are stored out of band; default {@link
     * #DEFAULT_INLINE_PAYLOAD_BYTES}, or {@code maxPayloadBytes} when that is smaller. Must be
     * positive and at most {@code maxPayloadBytes}.
     */
    public Builder inlinePayloadBytes(int inlinePayloadBytes) {
      this.inlinePayloadBytes = inlinePayloadBytes;
      return this;
    }

    /** Optional: skip detection from the connection's metadata. */
    public Builder dialect(Dialect dialect) {
      this.dialect = dialect;
      return this;
    }

    /**
     * The schema and table names of the outbox to enqueue into (validated by {@link
     * OutboxTables#of}); default {@link OutboxTables#DEFAULT}: {@code outbox_message} and its
     * siblings in the connection's default schema.
     */
    public Builder tables(OutboxTables tables) {
      this.tables = Objects.requireNonNull(tables, "tables");
      return this;
    }

    public OutboxConfig build() {
      return new OutboxConfig(
          destinations,
          maxPayloadBytes,
          inlinePayloadBytes == null ? defaultInline(maxPayloadBytes) : inlinePayloadBytes,
          dialect,
          tables);
    }
  }
}
