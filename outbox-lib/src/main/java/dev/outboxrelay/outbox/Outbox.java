package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.trace.TraceContextSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Appends jobs in the caller's transaction. Thread-safe; create one per application.
 *
 * <p>{@link #enqueue} uses only the connection it is given and never commits, rolls back or changes
 * auto-commit: the job becomes visible exactly when the caller's transaction commits, and vanishes
 * with it on rollback. Call it on the connection of the business write.
 *
 * <p>A payload over {@link OutboxConfig#inlinePayloadBytes} is written to {@code outbox_payload} on
 * the same connection, with a short reference in the job's row; the relay loads it before the send,
 * so sinks always see the full body.
 *
 * <p>Trace context: when a span is active on the caller's thread, each job's headers also carry its
 * W3C {@code traceparent} and {@code tracestate} (see {@link TraceContextSource}); a {@code
 * traceparent} the caller set itself wins.
 */
public class Outbox {
  private final OutboxConfig config;
  private final MessageValidator validator;
  private final TraceContextSource traceContext;
  private volatile JdbcEnqueueStore store;

  /** Stores the active OpenTelemetry span's context when the OpenTelemetry API is present. */
  public Outbox(OutboxConfig config) {
    this(config, TraceContextSource.detect());
  }

  /**
   * @param traceContext where the trace context stored with each job comes from ({@link
   *     TraceContextSource#NONE} stores none)
   */
  public Outbox(OutboxConfig config, TraceContextSource traceContext) {
    this.config = config;
    this.validator = new MessageValidator(config);
    this.traceContext = Objects.requireNonNull(traceContext, "traceContext");
    if (config.dialect() != null) {
      this.store = new JdbcEnqueueStore(config.dialect(), config.tables());
    }
  }

  public OutboxConfig config() {
    return config;
  }

  /**
   * Validates and inserts one job on {@code connection}.
   *
   * @return the job's id; {@code created=false} if a job with this operation ID, destination,
   *     payload, content type, ordering key and headers (trace headers aside) exists, whatever its
   *     delay (the first job's schedule stands)
   * @throws InvalidMessageException a field is invalid ({@link InvalidCharacterException} for a
   *     character some sink cannot carry unchanged); nothing was written
   * @throws DuplicateOperationException the operation ID is taken by a job that would be sent
   *     differently
   * @throws OutboxStoreException the database failed; the caller's transaction should roll back
   */
  public EnqueueResult enqueue(Connection connection, OutboxMessage message) {
    // Validated first: bad input is refused before the connection is touched (even for dialect
    // detection).
    NewJob validated = validated(message, traceContext.current());
    return storeFor(connection).insert(connection, validated);
  }

  /**
   * Validates every message, then inserts them in order on {@code connection}: when one is invalid
   * nothing is written. Use it for fan-out ({@link OutboxMessage#fanOut}). Like {@link #enqueue} it
   * never commits; if an insert fails (a database error, or {@link DuplicateOperationException})
   * roll the caller's transaction back so none commit.
   */
  public List<EnqueueResult> enqueueAll(Connection connection, List<OutboxMessage> messages) {
    List<NewJob> validated = new ArrayList<>(messages.size());
    Map<String, String> trace = traceContext.current();
    for (OutboxMessage m : messages) {
      validated.add(validated(m, trace));
    }
    JdbcEnqueueStore s = storeFor(connection);
    return validated.stream().map(m -> s.insert(connection, m)).toList();
  }

  /**
   * Validates, and decides where the payload goes: over {@link OutboxConfig#inlinePayloadBytes} it
   * is stored out of band, in {@code outbox_payload}, with a reference in the job's row.
   */
  private NewJob validated(OutboxMessage m, Map<String, String> trace) {
    String headersJson = validator.validate(m, trace);
    boolean byReference = MessageValidator.utf8Length(m.payload()) > config.inlinePayloadBytes();
    return new NewJob(m, headersJson, byReference);
  }

  private JdbcEnqueueStore storeFor(Connection connection) {
    JdbcEnqueueStore s = store;
    if (s == null) {
      try {
        Dialect dialect = DialectDetector.detect(connection.getMetaData());
        s = new JdbcEnqueueStore(dialect, config.tables());
        store = s;
      } catch (SQLException e) {
        throw new OutboxStoreException("cannot read database metadata to choose a dialect", e);
      }
    }
    return s;
  }
}
