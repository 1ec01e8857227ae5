package dev.outboxrelay.outbox.orm;

import dev.outboxrelay.outbox.EnqueueResult;
import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.trace.TraceContextSource;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * CDI bean that enqueues in the current JTA transaction. It refuses to run without one ({@link
 * Transactional.TxType#MANDATORY}): an outbox write outside the business transaction would break
 * the promise that both commit together. Any exception it throws (bad input, a reused operation ID,
 * a database error) marks the transaction rollback-only: the business write must not commit without
 * its job.
 *
 * <p>Configuration: {@code outbox.producer.destinations} (required, comma-separated), {@code
 * outbox.producer.max-payload-bytes} (default 1048576) and {@code
 * outbox.producer.inline-payload-bytes} (default 65536, or max-payload-bytes when that is smaller:
 * larger payloads are stored out of band in {@code outbox_payload}); {@code outbox.schema}
 * (optional) and {@code outbox.table} (default {@code outbox}) name the tables ({@link
 * OutboxTables}).
 *
 * <p>Each job also stores the W3C trace context of the span active in the caller (see {@link
 * TraceContextSource}): with {@code quarkus-opentelemetry}, the request that enqueues.
 */
@ApplicationScoped
public class TransactionalOutbox {

  @Inject DataSource dataSource;

  /** An application's own source when it declares one; else {@link TraceContextSource#detect()}. */
  @Inject Instance<TraceContextSource> traceContextSource;

  @ConfigProperty(name = "outbox.producer.destinations")
  List<String> destinations;

  @ConfigProperty(name = "outbox.producer.max-payload-bytes", defaultValue = "1048576")
  int maxPayloadBytes;

  /** Absent: {@link OutboxConfig#DEFAULT_INLINE_PAYLOAD_BYTES}, capped at max-payload-bytes. */
  @ConfigProperty(name = "outbox.producer.inline-payload-bytes")
  Optional<Integer> inlinePayloadBytes;

  /** The schema of the outbox tables; absent: the connection's default schema. */
  @ConfigProperty(name = OutboxTables.SCHEMA_KEY)
  Optional<String> schema;

  /** The base name of the outbox tables ({@code <table>_message}, ...). */
  @ConfigProperty(name = OutboxTables.TABLE_KEY, defaultValue = OutboxTables.DEFAULT_TABLE)
  String table;

  private Outbox outbox;
  private OutboxTables tables;

  @PostConstruct
  void init() {
    // Validated first: a hostile name fails here, naming its key, before any SQL exists.
    tables = OutboxTables.of(schema, table);
    OutboxConfig.Builder config =
        OutboxConfig.builder()
            .destinations(destinations)
            .maxPayloadBytes(maxPayloadBytes)
            .tables(tables);
    inlinePayloadBytes.ifPresent(config::inlinePayloadBytes);
    try {
      outbox =
          new Outbox(
              config.build(),
              traceContextSource.isResolvable()
                  ? traceContextSource.get()
                  : TraceContextSource.detect());
    } catch (IllegalArgumentException e) {
      // Name the property the operator set, not only the builder's field.
      throw new IllegalArgumentException(
          "outbox.producer configuration is invalid: "
              + e.getMessage()
                  .replace("inlinePayloadBytes", "inline-payload-bytes (inlinePayloadBytes)")
                  .replace("maxPayloadBytes", "max-payload-bytes (maxPayloadBytes)"),
          e);
    }
  }

  /**
   * The validated names of the outbox tables ({@code outbox.schema}, {@code outbox.table}), for an
   * application's migration and stores of the same outbox.
   */
  public OutboxTables tables() {
    return tables;
  }

  /** Enqueues on the transaction's connection; see {@link Outbox#enqueue}. */
  @Transactional(Transactional.TxType.MANDATORY)
  public EnqueueResult enqueue(OutboxMessage message) {
    try (Connection c = dataSource.getConnection()) {
      return outbox.enqueue(c, message);
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot obtain the transaction's connection", e);
    }
  }

  /**
   * Enqueues several jobs in the current transaction (e.g. {@link OutboxMessage#fanOut}): all are
   * validated first, so an invalid one writes nothing; all of them commit, or none.
   */
  @Transactional(Transactional.TxType.MANDATORY)
  public List<EnqueueResult> enqueueAll(List<OutboxMessage> messages) {
    try (Connection c = dataSource.getConnection()) {
      return outbox.enqueueAll(c, messages);
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot obtain the transaction's connection", e);
    }
  }
}
