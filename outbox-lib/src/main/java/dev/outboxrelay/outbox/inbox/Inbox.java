package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.InboxStatements;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Savepoint;
import java.sql.Types;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;

/**
 * Receives deliveries once, in the receiver's transaction. Thread-safe; create one per application.
 *
 * <p>{@link #receive} inserts the delivery's operation ID into {@code outbox_inbox} on the caller's
 * connection, then runs the handler on the same connection: the record and the effect commit
 * together or not at all. It never commits, and needs a transaction (auto-commit off).
 *
 * <ul>
 *   <li>First delivery: the handler runs; its outcome is stored with the row.
 *   <li>Repeat with the same payload (SHA-256 of the bytes): the handler does not run; the first
 *       outcome is returned with {@code applied=false}, and the delivery is counted.
 *   <li>Same ID, different payload: {@link InboxConflictException}, nothing written.
 *   <li>Two deliveries of one ID at once on two connections: the unique key makes the second insert
 *       wait for the first transaction (the database's own row locking, no lock in the
 *       application). If the first commits, the second is a repeat; if it rolls back, the second
 *       applies. Run receivers at READ COMMITTED (the default of PostgreSQL, H2 and SQL Server;
 *       MariaDB's REPEATABLE READ also works, the repeat's read is a locking one).
 *   <li>Bad input (missing or overlong ID or destination, payload over the limit): {@link
 *       InvalidDeliveryException} before any statement.
 *   <li>The handler throws: {@link InboxHandlerException}, nothing recorded. With {@link
 *       InboxConfig#savepoint()} (the default) the caller's transaction is rolled back to where
 *       this call began and stays usable; without, the caller must roll back.
 * </ul>
 */
public class Inbox {
  /** The longest outcome a handler may return. */
  public static final int MAX_OUTCOME_CHARS = 2000;

  private static final HexFormat HEX = HexFormat.of();

  private final InboxConfig config;
  private volatile InboxStatements dialect;

  public Inbox(InboxConfig config) {
    this.config = Objects.requireNonNull(config, "config");
  }

  public InboxConfig config() {
    return config;
  }

  /** Receives one delivery on {@code connection}; see the class comment. */
  public InboxReceipt receive(Connection connection, InboxDelivery delivery, InboxHandler handler) {
    validate(delivery);
    Objects.requireNonNull(handler, "handler");
    InboxStatements d = dialect(connection);
    String digest = sha256(delivery.payload());
    try {
      if (connection.getAutoCommit()) {
        throw new IllegalStateException(
            "Inbox.receive needs a transaction: the connection is in"
                + " auto-commit mode, so the inbox row and the effect could commit apart");
      }
      // Once more at most: a row found missing after the insert said it exists was deleted
      // in between (retention), so the second insert applies.
      for (int round = 0; ; round++) {
        Savepoint savepoint = config.savepoint() ? connection.setSavepoint() : null;
        if (insert(connection, d, delivery, digest)) {
          return apply(connection, d, delivery, handler, savepoint);
        }
        release(connection, d, savepoint);
        InboxReceipt repeat = repeat(connection, d, delivery, digest);
        if (repeat != null || round == 1) {
          if (repeat == null) {
            throw new OutboxStoreException(
                "operation " + delivery.operationId() + ": the inbox row exists and vanished twice",
                null);
          }
          return repeat;
        }
      }
    } catch (SQLException e) {
      throw new OutboxStoreException(
          "inbox: receiving operation "
              + delivery.operationId()
              + " of destination "
              + delivery.destination()
              + " failed: "
              + e.getMessage(),
          e);
    }
  }

  /** The inbox row of a first delivery, or false when the ID was applied (and committed). */
  private boolean insert(Connection c, InboxStatements d, InboxDelivery delivery, String digest)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(d.insertSql())) {
      ps.setString(1, delivery.destination());
      ps.setString(2, delivery.operationId());
      ps.setString(3, digest);
      ps.setInt(4, delivery.payload().length);
      if (delivery.messageId() == null) {
        ps.setNull(5, Types.BIGINT);
      } else {
        ps.setLong(5, delivery.messageId());
      }
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if (d.dialect().errors().isUniqueViolation(e)) {
        return false;
      }
      throw e;
    }
  }

  private InboxReceipt apply(
      Connection c,
      InboxStatements d,
      InboxDelivery delivery,
      InboxHandler handler,
      Savepoint savepoint)
      throws SQLException {
    String outcome;
    try {
      outcome = handler.apply(c, delivery);
      if (outcome != null && outcome.length() > MAX_OUTCOME_CHARS) {
        throw new IllegalStateException(
            "the handler's outcome is "
                + outcome.length()
                + " characters; the limit is "
                + MAX_OUTCOME_CHARS);
      }
    } catch (Exception e) {
      if (savepoint != null) {
        c.rollback(savepoint);
        release(c, d, savepoint);
      }
      throw new InboxHandlerException(
          delivery.operationId(),
          "the handler of operation "
              + delivery.operationId()
              + " failed, nothing recorded: "
              + e.getMessage(),
          e);
    }
    if (outcome != null) {
      try (PreparedStatement ps = c.prepareStatement(d.outcomeSql())) {
        ps.setString(1, outcome);
        ps.setString(2, delivery.destination());
        ps.setString(3, delivery.operationId());
        ps.executeUpdate();
      }
    }
    if (config.confirmationSource().isPresent()) {
      try (PreparedStatement ps = c.prepareStatement(d.confirmSql())) {
        ps.setString(1, delivery.operationId());
        ps.setString(2, delivery.destination());
        ps.setString(3, config.confirmationSource().get());
        ps.executeUpdate();
      }
    }
    release(c, d, savepoint);
    Instant appliedAt;
    try (PreparedStatement ps = c.prepareStatement(d.appliedAtSql())) {
      ps.setString(1, delivery.destination());
      ps.setString(2, delivery.operationId());
      try (ResultSet rs = ps.executeQuery()) {
        appliedAt = rs.next() ? d.dialect().binding().readInstant(rs, 1) : null;
      }
    }
    return new InboxReceipt(
        delivery.operationId(), delivery.destination(), true, outcome, 1, appliedAt);
  }

  /** The committed row, locked; null when it is gone. Conflict when the payload differs. */
  private InboxReceipt repeat(
      Connection c, InboxStatements d, InboxDelivery delivery, String digest) throws SQLException {
    String storedDigest;
    String outcome;
    long deliveries;
    Instant appliedAt;
    try (PreparedStatement ps = c.prepareStatement(d.lockRowSql())) {
      ps.setString(1, delivery.destination());
      ps.setString(2, delivery.operationId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        storedDigest = rs.getString(1);
        outcome = rs.getString(2);
        deliveries = rs.getLong(3);
        appliedAt = d.dialect().binding().readInstant(rs, 4);
      }
    }
    if (!digest.equals(storedDigest)) {
      throw new InboxConflictException(delivery.operationId(), delivery.destination());
    }
    try (PreparedStatement ps = c.prepareStatement(d.countRepeatSql())) {
      ps.setString(1, delivery.destination());
      ps.setString(2, delivery.operationId());
      ps.executeUpdate();
    }
    return new InboxReceipt(
        delivery.operationId(), delivery.destination(), false, outcome, deliveries + 1, appliedAt);
  }

  private static void release(Connection c, InboxStatements d, Savepoint savepoint)
      throws SQLException {
    if (savepoint == null || !d.dialect().releasesSavepoints()) {
      return;
    }
    try {
      c.releaseSavepoint(savepoint);
    } catch (SQLFeatureNotSupportedException e) {
      // A driver without release: the savepoint ends with the transaction.
    }
  }

  /**
   * Refuses a delivery whose operation ID or destination is missing, blank or longer than {@value
   * InboxConfig#MAX_ID_CHARS} characters, or whose payload is missing or over the limit.
   */
  public void validate(InboxDelivery delivery) {
    if (delivery == null) {
      throw new InvalidDeliveryException("delivery", "delivery is required");
    }
    checkId("operationId", delivery.operationId());
    checkId("destination", delivery.destination());
    if (delivery.payload() == null) {
      throw new InvalidDeliveryException("payload", "payload is required (may be empty)");
    }
    if (delivery.payload().length > config.maxPayloadBytes()) {
      throw new InvalidDeliveryException(
          "payload",
          "payload is "
              + delivery.payload().length
              + " bytes; the limit is "
              + config.maxPayloadBytes());
    }
  }

  private static void checkId(String field, String value) {
    if (value == null || value.isBlank()) {
      throw new InvalidDeliveryException(field, field + " is required");
    }
    if (value.length() > InboxConfig.MAX_ID_CHARS) {
      throw new InvalidDeliveryException(
          field,
          field
              + " is "
              + value.length()
              + " characters long; the limit is "
              + InboxConfig.MAX_ID_CHARS);
    }
    if (value.chars().anyMatch(Character::isISOControl)) {
      throw new InvalidDeliveryException(field, field + " contains a control character");
    }
  }

  InboxStatements dialect(Connection connection) {
    InboxStatements d = dialect;
    if (d == null) {
      try {
        d =
            DialectDetector.forProductName(connection.getMetaData().getDatabaseProductName())
                .inbox();
      } catch (SQLException e) {
        throw new OutboxStoreException(
            "cannot read database metadata to choose the inbox dialect", e);
      }
      dialect = d;
    }
    return d;
  }

  static String sha256(byte[] bytes) {
    try {
      return HEX.formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }
}
