package dev.outboxrelay.demo.jdbc;

import java.sql.SQLException;

/** A failed statement; keeps the driver's SQL state and vendor error code. */
public class DataAccessException extends RuntimeException {
  /** SQL state of a unique-key violation on H2 and PostgreSQL. */
  static final String UNIQUE_VIOLATION = "23505";

  /** SQL state SQL Server reports for every integrity violation, unique or not. */
  static final String INTEGRITY_VIOLATION = "23000";

  /** SQL Server: violation of a PRIMARY KEY or UNIQUE constraint. */
  static final int SQLSERVER_UNIQUE_CONSTRAINT = 2627;

  /** SQL Server: duplicate key in a unique index. */
  static final int SQLSERVER_UNIQUE_INDEX = 2601;

  private final String sqlState;
  private final int errorCode;

  DataAccessException(String sql, SQLException cause) {
    super(cause.getMessage() + " [" + sql + "]", cause);
    this.sqlState = cause.getSQLState();
    this.errorCode = cause.getErrorCode();
  }

  public String sqlState() {
    return sqlState;
  }

  /** The driver's vendor error code (0 when it gives none). */
  public int errorCode() {
    return errorCode;
  }

  /** True when the statement violated a primary key or unique constraint. */
  public boolean isUniqueViolation() {
    if (UNIQUE_VIOLATION.equals(sqlState)) {
      return true;
    }
    // SQL Server's 23000 also covers NOT NULL and foreign keys: only these codes are duplicates.
    return INTEGRITY_VIOLATION.equals(sqlState)
        && (errorCode == SQLSERVER_UNIQUE_CONSTRAINT || errorCode == SQLSERVER_UNIQUE_INDEX);
  }
}
