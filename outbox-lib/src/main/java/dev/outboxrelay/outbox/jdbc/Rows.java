package dev.outboxrelay.outbox.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** Reads what a statement returns: every row, mapped. */
public final class Rows {
  private Rows() {}

  /** Maps one row of a result set. */
  @FunctionalInterface
  public interface Mapper<T> {
    T map(ResultSet rs) throws SQLException;
  }

  /** Runs a query and maps every row. */
  public static <T> List<T> list(PreparedStatement ps, Mapper<T> mapper) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      return all(rs, mapper);
    }
  }

  /**
   * Runs a statement whose rows may follow update counts (a batch of several statements) and maps
   * the rows of its first result set; a statement that returns none is an error.
   */
  public static <T> List<T> listAfterCounts(PreparedStatement ps, Mapper<T> mapper)
      throws SQLException {
    boolean isResultSet = ps.execute();
    while (!isResultSet) {
      if (ps.getUpdateCount() == -1) {
        throw new SQLException("the statement returned no result set");
      }
      isResultSet = ps.getMoreResults();
    }
    try (ResultSet rs = ps.getResultSet()) {
      return all(rs, mapper);
    }
  }

  private static <T> List<T> all(ResultSet rs, Mapper<T> mapper) throws SQLException {
    List<T> rows = new ArrayList<>();
    while (rs.next()) {
      rows.add(mapper.map(rs));
    }
    return rows;
  }
}
