package dev.outboxrelay.outbox.store.dialect;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.UUID;

/**
 * How a database's driver takes and gives claim tokens and times: the stores bind and read them
 * only through this, so they stay database-neutral. Text, numbers and bytes are bound as they are.
 */
public abstract class TypeBinding {

  /** Native types: {@code uuid} and {@code timestamp with time zone} (PostgreSQL, H2). */
  public static final TypeBinding NATIVE = new Native();

  /**
   * Tokens as text and times as UTC wall-clock time in a column without a zone (MariaDB's {@code
   * CHAR(36)} and {@code DATETIME(3)}, SQL Server's {@code uniqueidentifier} and {@code
   * datetime2(3)}), a null token bound as {@code nullTokenType}.
   */
  public static TypeBinding utcText(int nullTokenType) {
    return new UtcText(nullTokenType);
  }

  TypeBinding() {}

  /** Binds a claim token (may be null). */
  public abstract void bindUuid(PreparedStatement ps, int index, UUID token) throws SQLException;

  /** Reads a claim token column (null stays null). */
  public abstract UUID readUuid(ResultSet rs, int column) throws SQLException;

  /** Binds a time (may be null), read earlier by {@link #readInstant} or made by the caller. */
  public abstract void bindInstant(PreparedStatement ps, int index, Instant instant)
      throws SQLException;

  /** Reads a time column written by the database clock (null stays null). */
  public abstract Instant readInstant(ResultSet rs, int column) throws SQLException;

  /**
   * Binds a statement's parameters in order from 1: times and tokens through this binding, arrays
   * ({@link SqlArray}) as the driver's arrays, the rest as they are.
   */
  public void bindAll(PreparedStatement ps, List<Object> params) throws SQLException {
    for (int i = 0; i < params.size(); i++) {
      Object p = params.get(i);
      if (p instanceof Instant t) {
        bindInstant(ps, i + 1, t);
      } else if (p instanceof UUID u) {
        bindUuid(ps, i + 1, u);
      } else if (p instanceof SqlArray a) {
        ps.setArray(i + 1, ps.getConnection().createArrayOf(a.type(), a.elements()));
      } else {
        ps.setObject(i + 1, p);
      }
    }
  }

  private static final class Native extends TypeBinding {
    @Override
    public void bindUuid(PreparedStatement ps, int index, UUID token) throws SQLException {
      ps.setObject(index, token);
    }

    @Override
    public UUID readUuid(ResultSet rs, int column) throws SQLException {
      return rs.getObject(column, UUID.class);
    }

    @Override
    public void bindInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
      if (instant == null) {
        ps.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
      } else {
        ps.setObject(index, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
      }
    }

    @Override
    public Instant readInstant(ResultSet rs, int column) throws SQLException {
      OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
      return t == null ? null : t.toInstant();
    }
  }

  private static final class UtcText extends TypeBinding {
    private final int nullTokenType;

    UtcText(int nullTokenType) {
      this.nullTokenType = nullTokenType;
    }

    @Override
    public void bindUuid(PreparedStatement ps, int index, UUID token) throws SQLException {
      if (token == null) {
        ps.setNull(index, nullTokenType);
      } else {
        ps.setString(index, token.toString());
      }
    }

    @Override
    public UUID readUuid(ResultSet rs, int column) throws SQLException {
      String token = rs.getString(column);
      return token == null ? null : UUID.fromString(token);
    }

    @Override
    public void bindInstant(PreparedStatement ps, int index, Instant instant) throws SQLException {
      // No zone in the column: it holds UTC wall-clock time, bound without conversion.
      if (instant == null) {
        ps.setNull(index, Types.TIMESTAMP);
      } else {
        ps.setObject(index, LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
      }
    }

    @Override
    public Instant readInstant(ResultSet rs, int column) throws SQLException {
      LocalDateTime t = rs.getObject(column, LocalDateTime.class);
      return t == null ? null : t.toInstant(ZoneOffset.UTC);
    }
  }
}
