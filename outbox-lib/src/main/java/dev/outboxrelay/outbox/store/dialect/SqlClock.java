package dev.outboxrelay.outbox.store.dialect;

import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * A database's clock as SQL fragments: every time decision (due, lease, expiry) is taken on it,
 * never on the relay's clock (docs/design.md "Claim / lease / complete contract"). Each database
 * declares its clock once, here; every statement of its dialect is built from these fragments.
 */
public final class SqlClock {
  private final String now;
  private final String statementNow;
  private final UnaryOperator<String> plusMillisParam;
  private final String timestampType;
  private final String timestampParam;

  /**
   * @param now the database's current time, as an SQL expression
   * @param statementNow the time the current statement started (PostgreSQL's {@code now()} is the
   *     start of the transaction); {@code now} where the clock is per statement already
   * @param plusMillisParam an expression of a time plus one bigint parameter of milliseconds (which
   *     may be negative)
   * @param timestampType the type name of the time columns, for casts
   * @param timestampParam a time parameter bound by {@link TypeBinding#bindInstant}, typed for use
   *     inside an expression
   */
  public SqlClock(
      String now,
      String statementNow,
      UnaryOperator<String> plusMillisParam,
      String timestampType,
      String timestampParam) {
    this.now = Objects.requireNonNull(now, "now");
    this.statementNow = Objects.requireNonNull(statementNow, "statementNow");
    this.plusMillisParam = Objects.requireNonNull(plusMillisParam, "plusMillisParam");
    this.timestampType = Objects.requireNonNull(timestampType, "timestampType");
    this.timestampParam = Objects.requireNonNull(timestampParam, "timestampParam");
  }

  /** The database's current time. */
  public String now() {
    return now;
  }

  /** The time the current statement started. */
  public String statementNow() {
    return statementNow;
  }

  /** Database now plus a bigint parameter of milliseconds (may be negative). */
  public String nowPlusMillisParam() {
    return plusMillisParam.apply(now);
  }

  /** {@link #statementNow()} plus a bigint parameter of milliseconds. */
  public String statementNowPlusMillisParam() {
    return plusMillisParam.apply(statementNow);
  }

  /** The type name of the time columns, for casts. */
  public String timestampType() {
    return timestampType;
  }

  /** A time parameter, typed for use inside an expression. */
  public String timestampParam() {
    return timestampParam;
  }

  /** Reads the database's time. */
  public String nowSql() {
    return "SELECT " + now;
  }

  @Override
  public String toString() {
    return now;
  }
}
