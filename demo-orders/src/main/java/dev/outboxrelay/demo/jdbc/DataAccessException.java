package dev.outboxrelay.demo.jdbc;

import java.sql.SQLException;

/** A failed statement; keeps the driver's SQL state. */
public class DataAccessException extends RuntimeException {
  /** SQL state of a unique-key violation (H2 and PostgreSQL). */
  static final String UNIQUE_VIOLATION = "23505";

  private final String sqlState;

  DataAccessException(String sql, SQLException cause) {
    super(cause.getMessage() + " [" + sql + "]", cause);
    this.sqlState = cause.getSQLState();
  }

  public String sqlState() {
    return sqlState;
  }

  /** True when the statement violated a primary key or unique constraint. */
  public boolean isUniqueViolation() {
    return UNIQUE_VIOLATION.equals(sqlState);
  }
}
