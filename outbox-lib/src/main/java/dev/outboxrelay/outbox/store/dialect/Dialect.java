package dev.outboxrelay.outbox.store.dialect;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One database: its clock ({@link SqlClock}), how its driver binds tokens and times ({@link
 * TypeBinding}), what its errors mean ({@link ErrorCodes}) and the statements every store sends to
 * it, as statement sets rendered once for an outbox's table names ({@link #jobs}, {@link #admin},
 * {@link #reconciliation}, {@link #inbox}). The statements every database shares are built from
 * those parts one family to a class, each on top of the one below: {@link SqlFragments} (columns
 * and shared fragments), {@link ClaimSql} (enqueue, key heads, claim), {@link TransitionSql}
 * (transitions, reaper, retention), {@link AdminSql} (reads and operator actions), {@link
 * ReconciliationSql} (reconciliation, fleet lock), and this class (the inbox, and the statement
 * sets). The class of each database ({@link PostgresDialect}, {@link MariaDbDialect}, {@link
 * H2Dialect}, {@link SqlServerDialect}) extends this one, so it stays one object, and overrides
 * only what differs, in whichever family, each quirk with a one-line comment. The builders are
 * package-private: a store reads statements only through the statement sets, written with the
 * default names and rendered for the configured ones when the set is made. Parameters are
 * documented on each builder in order.
 */
public abstract class Dialect extends ReconciliationSql {

  Dialect(String name, SqlClock clock, TypeBinding binding, ErrorCodes errors) {
    super(name, clock, binding, errors);
  }

  /**
   * Short name ({@link DialectDetector#names()}); also the migration folders {@code
   * db/outbox/<name>} and {@code db/inbox/<name>}.
   */
  public final String name() {
    return name;
  }

  public final SqlClock clock() {
    return clock;
  }

  public final TypeBinding binding() {
    return binding;
  }

  public final ErrorCodes errors() {
    return errors;
  }

  /** Flyway location of this database's outbox migrations. */
  public final String migrationLocation() {
    return "classpath:db/outbox/" + name;
  }

  /** Flyway location of this database's inbox migrations. */
  public final String inboxMigrationLocation() {
    return "classpath:db/inbox/" + name;
  }

  /**
   * The notification this database sends when jobs are committed, for relays to wake up on; empty
   * when it has none (relays poll only).
   */
  public Optional<ReadyNotifications> readyNotifications() {
    return Optional.empty();
  }

  /**
   * The isolation level the claim's and retention's locking reads run at, when the connection's own
   * is not right for them; empty: as the connection comes.
   */
  public OptionalInt lockingReadIsolation() {
    return OptionalInt.empty();
  }

  /** Most (id, token) pairs one batched statement takes; the store splits larger batches. */
  public int maxCompletionPairs() {
    return 1000;
  }

  /** Whether the driver releases savepoints (SQL Server's keeps them to the transaction's end). */
  public boolean releasesSavepoints() {
    return true;
  }

  /** The relay's and the enqueue's statements for the outbox named by {@code tables}. */
  public final JobStatements jobs(OutboxTables tables) {
    return new JobStatements(this, tables);
  }

  /** The operator's statements for the outbox named by {@code tables}. */
  public final AdminStatements admin(OutboxTables tables) {
    return new AdminStatements(this, tables);
  }

  /**
   * The reconciliation's and the fleet lock's statements for the outbox named by {@code tables}.
   */
  public final ReconciliationStatements reconciliation(OutboxTables tables) {
    return new ReconciliationStatements(this, tables);
  }

  /** The inbox's statements ({@code outbox_inbox}, and the confirmations it counts). */
  public final InboxStatements inbox() {
    return new InboxStatements(this);
  }

  @Override
  public String toString() {
    return getClass().getSimpleName();
  }

  // ---- inbox ---------------------------------------------------------------------------------

  /**
   * Inserts the inbox row. On PostgreSQL it reports an existing row as 0 rows; elsewhere as a
   * unique violation, which fails only the statement. Either way a concurrent uncommitted insert of
   * the same key makes it wait for that transaction. Parameters: destination, operation_id,
   * payload_sha256, payload_bytes, message_id.
   */
  String inboxInsertSql() {
    return "INSERT INTO outbox_inbox (destination, operation_id, payload_sha256, payload_bytes,"
        + " message_id, applied_at, last_delivery_at) VALUES (?, ?, ?, ?, ?, "
        + now()
        + ", "
        + now()
        + ")";
  }

  /**
   * The committed row of a key, locked for this transaction. Parameters: destination, operation_id.
   */
  String inboxLockRowSql() {
    return "SELECT "
        + INBOX_COLUMNS
        + " FROM outbox_inbox WHERE destination = ? AND operation_id = ? FOR UPDATE";
  }

  /** Counts a repeat. Parameters: destination, operation_id. */
  String inboxCountRepeatSql() {
    return "UPDATE outbox_inbox SET deliveries = deliveries + 1, last_delivery_at = "
        + now()
        + " WHERE destination = ? AND operation_id = ?";
  }

  /**
   * Counts one application in the relay's {@code outbox_confirmation} (shared database).
   * Parameters: operation_id, destination, source.
   */
  abstract String inboxConfirmSql();

  /** The inbox ledger's row limit with one parameter. */
  String inboxLimit() {
    return " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY";
  }

  /**
   * Deletes at most n inbox rows applied before a time, oldest first. Parameters: {@link
   * #inboxDeleteBatchParams}.
   */
  abstract String inboxDeleteBatchSql();

  /** The parameters of {@link #inboxDeleteBatchSql}, in its order. Default: time, n. */
  List<Object> inboxDeleteBatchParams(Instant before, int n) {
    return List.of(before, n);
  }
}
