package dev.outboxrelay.demo.jdbc;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * Runs one statement with positional parameters. An {@link Instant} parameter is bound as a {@code
 * TIMESTAMP WITH TIME ZONE} in UTC. Joins the caller's JTA transaction, if any.
 */
@ApplicationScoped
public class Jdbc {

  /** Maps the current row of a result set. */
  @FunctionalInterface
  public interface RowMapper<T> {
    T map(ResultSet rs) throws SQLException;
  }

  @Inject DataSource dataSource;

  /** All rows of a query. */
  public <T> List<T> query(String sql, RowMapper<T> mapper, Object... params) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = prepare(c, sql, params);
        ResultSet rs = ps.executeQuery()) {
      List<T> rows = new ArrayList<>();
      while (rs.next()) {
        rows.add(mapper.map(rs));
      }
      return rows;
    } catch (SQLException e) {
      throw new DataAccessException(sql, e);
    }
  }

  /** The single value of a query that returns exactly one row (a count, a sum). */
  public long queryLong(String sql, Object... params) {
    List<Long> rows = query(sql, rs -> rs.getLong(1), params);
    if (rows.size() != 1) {
      throw new IllegalStateException("expected one row, got " + rows.size() + " [" + sql + "]");
    }
    return rows.get(0);
  }

  /** Runs an INSERT, UPDATE or DELETE and returns the number of rows changed. */
  public int update(String sql, Object... params) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = prepare(c, sql, params)) {
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new DataAccessException(sql, e);
    }
  }

  /** Reads a {@code TIMESTAMP WITH TIME ZONE} column; null stays null. */
  public static Instant instant(ResultSet rs, String column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  private static PreparedStatement prepare(Connection c, String sql, Object... params)
      throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    try {
      for (int i = 0; i < params.length; i++) {
        Object p = params[i];
        ps.setObject(
            i + 1, p instanceof Instant t ? OffsetDateTime.ofInstant(t, ZoneOffset.UTC) : p);
      }
      return ps;
    } catch (SQLException e) {
      ps.close();
      throw e;
    }
  }
}
