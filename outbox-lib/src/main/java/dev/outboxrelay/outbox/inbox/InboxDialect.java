package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.OutboxException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Locale;

/**
 * The inbox's SQL on each database. Everything the inbox sends to a database is here or in the
 * {@code db/inbox/<name>} scripts.
 */
public abstract class InboxDialect {
  static final String COLUMNS = "payload_sha256, outcome, deliveries, applied_at";
  static final String LEDGER_COLUMNS =
      "operation_id, destination, message_id, applied_at, deliveries";

  /** Short name; also the migration folder {@code db/inbox/<name>}. */
  public abstract String name();

  /** The database clock (UTC where the column has no zone). */
  abstract String now();

  /** Flyway location of this dialect's inbox migrations. */
  public String migrationLocation() {
    return "classpath:db/inbox/" + name();
  }

  /**
   * Inserts the inbox row. On PostgreSQL it reports an existing row as 0 rows; elsewhere as a
   * unique violation, which fails only the statement. Either way a concurrent uncommitted insert
   * of the same key makes it wait for that transaction. Parameters: destination, operation_id,
   * payload_sha256, payload_bytes, message_id.
   */
  String insertSql() {
    return "INSERT INTO outbox_inbox (destination, operation_id, payload_sha256, payload_bytes,"
        + " message_id, applied_at, last_delivery_at) VALUES (?, ?, ?, ?, ?, " + now() + ", " + now() + ")";
  }

  /** The committed row of a key, locked for this transaction. Parameters: destination, operation_id. */
  String lockRowSql() {
    return "SELECT " + COLUMNS + " FROM outbox_inbox WHERE destination = ? AND operation_id = ? FOR UPDATE";
  }

  /** Counts a repeat. Parameters: destination, operation_id. */
  String countRepeatSql() {
    return "UPDATE outbox_inbox SET deliveries = deliveries + 1, last_delivery_at = " + now()
        + " WHERE destination = ? AND operation_id = ?";
  }

  /** Stores the handler's outcome. Parameters: outcome, destination, operation_id. */
  String outcomeSql() {
    return "UPDATE outbox_inbox SET outcome = ? WHERE destination = ? AND operation_id = ?";
  }

  /** The time the row was applied at. Parameters: destination, operation_id. */
  String appliedAtSql() {
    return "SELECT applied_at FROM outbox_inbox WHERE destination = ? AND operation_id = ?";
  }

  /**
   * Counts one application in the relay's {@code outbox_confirmation} (shared database).
   * Parameters: operation_id, destination, source.
   */
  abstract String confirmSql();

  /**
   * One ledger page: rows applied strictly after a time (or from the start), optionally of one
   * destination, in (applied_at, operation_id) order, at most n.
   */
  String ledgerSql(boolean after, boolean oneDestination) {
    return ledgerSelect(after, oneDestination, false) + limit();
  }

  /** Every row applied at exactly one time, optionally of one destination. */
  String ledgerAtSql(boolean oneDestination) {
    return ledgerSelect(true, oneDestination, true);
  }

  /** Whether rows exist after a time. Parameters: time[, destination]. */
  String ledgerMoreSql(boolean oneDestination) {
    return "SELECT COUNT(*) FROM outbox_inbox WHERE applied_at > ?"
        + (oneDestination ? " AND destination = ?" : "");
  }

  private String ledgerSelect(boolean after, boolean oneDestination, boolean exact) {
    StringBuilder sql = new StringBuilder("SELECT " + LEDGER_COLUMNS + " FROM outbox_inbox");
    String glue = " WHERE ";
    if (after) {
      sql.append(glue).append(exact ? "applied_at = ?" : "applied_at > ?");
      glue = " AND ";
    }
    if (oneDestination) {
      sql.append(glue).append("destination = ?");
    }
    return sql.append(" ORDER BY applied_at, operation_id").toString();
  }

  /** Row limit clause with one parameter. */
  String limit() {
    return " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY";
  }

  /** Deletes at most n rows applied before a time, oldest first. Parameters: time, n. */
  abstract String deleteBatchSql();

  /** Totals over the whole inbox: rows, deliveries. */
  String totalsSql() {
    return "SELECT COUNT(*), COALESCE(SUM(deliveries), 0) FROM outbox_inbox";
  }

  boolean isUniqueViolation(SQLException e) {
    return "23505".equals(e.getSQLState());
  }

  void bindInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
    ps.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
  }

  Instant readInstant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  /**
   * The dialect of a JDBC product name ({@code PostgreSQL}, {@code H2}, {@code MariaDB}, {@code
   * Microsoft SQL Server}) or a dialect name ({@code postgresql}, {@code h2}, {@code mariadb},
   * {@code sqlserver}).
   */
  public static InboxDialect forProductName(String product) {
    String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (p.contains("postgres")) {
      return new Postgres();
    }
    if (p.equals("h2")) {
      return new H2();
    }
    if (p.equals("mariadb")) {
      return new MariaDb();
    }
    if (p.equals("microsoft sql server") || p.equals("sqlserver")) {
      return new SqlServer();
    }
    throw new OutboxException("unsupported database '" + product
        + "' for the inbox; supported: PostgreSQL, H2, MariaDB, Microsoft SQL Server");
  }

  static final class Postgres extends InboxDialect {
    @Override
    public String name() {
      return "postgresql";
    }

    @Override
    String now() {
      return "now()";
    }

    /** A unique violation would abort the whole transaction here: ON CONFLICT answers 0 rows. */
    @Override
    String insertSql() {
      return super.insertSql() + " ON CONFLICT (destination, operation_id) DO NOTHING";
    }

    @Override
    String confirmSql() {
      return "INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at, applied_count,"
          + " source) VALUES (?, ?, now(), 1, ?) ON CONFLICT (operation_id, destination)"
          + " DO UPDATE SET applied_count = outbox_confirmation.applied_count + 1";
    }

    @Override
    String limit() {
      return " LIMIT ?";
    }

    @Override
    String deleteBatchSql() {
      return "DELETE FROM outbox_inbox WHERE id IN (SELECT id FROM outbox_inbox WHERE applied_at < ?"
          + " ORDER BY applied_at LIMIT ?)";
    }
  }

  static final class H2 extends InboxDialect {
    @Override
    public String name() {
      return "h2";
    }

    @Override
    String now() {
      return "CURRENT_TIMESTAMP";
    }

    @Override
    String confirmSql() {
      return "MERGE INTO outbox_confirmation c USING (VALUES (CAST(? AS VARCHAR(200)),"
          + " CAST(? AS VARCHAR(200)), CAST(? AS VARCHAR(200)))) v (op, dest, src)"
          + " ON c.operation_id = v.op AND c.destination = v.dest"
          + " WHEN MATCHED THEN UPDATE SET applied_count = c.applied_count + 1"
          + " WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)"
          + " VALUES (v.op, v.dest, CURRENT_TIMESTAMP, 1, v.src)";
    }

    @Override
    String deleteBatchSql() {
      return "DELETE FROM outbox_inbox WHERE id IN (SELECT id FROM outbox_inbox WHERE applied_at < ?"
          + " ORDER BY applied_at FETCH FIRST ? ROWS ONLY)";
    }
  }

  static final class MariaDb extends InboxDialect {
    /** ER_DUP_ENTRY. */
    private static final int DUPLICATE_KEY = 1062;

    @Override
    public String name() {
      return "mariadb";
    }

    @Override
    String now() {
      // UTC whatever the session time zone.
      return "UTC_TIMESTAMP(3)";
    }

    @Override
    String confirmSql() {
      return "INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at, applied_count,"
          + " source) VALUES (?, ?, UTC_TIMESTAMP(3), 1, ?)"
          + " ON DUPLICATE KEY UPDATE applied_count = applied_count + 1";
    }

    @Override
    String limit() {
      return " LIMIT ?";
    }

    @Override
    String deleteBatchSql() {
      return "DELETE FROM outbox_inbox WHERE applied_at < ? ORDER BY applied_at LIMIT ?";
    }

    @Override
    boolean isUniqueViolation(SQLException e) {
      return e.getErrorCode() == DUPLICATE_KEY;
    }

    @Override
    void bindInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
      ps.setObject(index, LocalDateTime.ofInstant(instant, ZoneOffset.UTC), Types.TIMESTAMP);
    }

    @Override
    Instant readInstant(ResultSet rs, int column) throws SQLException {
      LocalDateTime t = rs.getObject(column, LocalDateTime.class);
      return t == null ? null : t.toInstant(ZoneOffset.UTC);
    }
  }

  static final class SqlServer extends InboxDialect {
    private static final int UNIQUE_CONSTRAINT = 2627;
    private static final int UNIQUE_INDEX = 2601;

    @Override
    public String name() {
      return "sqlserver";
    }

    @Override
    String now() {
      return "SYSUTCDATETIME()";
    }

    @Override
    String lockRowSql() {
      return "SELECT " + COLUMNS + " FROM outbox_inbox WITH (UPDLOCK, ROWLOCK)"
          + " WHERE destination = ? AND operation_id = ?";
    }

    @Override
    String confirmSql() {
      return "MERGE INTO outbox_confirmation WITH (HOLDLOCK) AS c USING (SELECT ? AS op, ? AS dest,"
          + " ? AS src) v ON c.operation_id = v.op AND c.destination = v.dest"
          + " WHEN MATCHED THEN UPDATE SET applied_count = c.applied_count + 1"
          + " WHEN NOT MATCHED THEN INSERT (operation_id, destination, confirmed_at, applied_count, source)"
          + " VALUES (v.op, v.dest, SYSUTCDATETIME(), 1, v.src);";
    }

    @Override
    String deleteBatchSql() {
      // TOP needs its parameter first: the store binds (time, n) as (n, time) here.
      return "DELETE FROM outbox_inbox WHERE id IN (SELECT TOP (?) id FROM outbox_inbox"
          + " WHERE applied_at < ? ORDER BY applied_at)";
    }

    @Override
    boolean limitFirst() {
      return true;
    }

    @Override
    boolean releasesSavepoints() {
      return false;
    }

    @Override
    boolean isUniqueViolation(SQLException e) {
      return e.getErrorCode() == UNIQUE_CONSTRAINT || e.getErrorCode() == UNIQUE_INDEX;
    }

    @Override
    void bindInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
      ps.setObject(index, LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
    }

    @Override
    Instant readInstant(ResultSet rs, int column) throws SQLException {
      LocalDateTime t = rs.getObject(column, LocalDateTime.class);
      return t == null ? null : t.toInstant(ZoneOffset.UTC);
    }
  }

  /** Whether the driver releases savepoints (SQL Server's keeps them to the transaction's end). */
  boolean releasesSavepoints() {
    return true;
  }

  /** Whether {@link #deleteBatchSql} takes the row count before the time. */
  boolean limitFirst() {
    return false;
  }
}
