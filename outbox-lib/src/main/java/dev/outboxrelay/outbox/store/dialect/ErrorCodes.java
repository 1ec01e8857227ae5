package dev.outboxrelay.outbox.store.dialect;

import java.sql.SQLException;
import java.util.Set;

/**
 * What a database's errors mean to the stores, by SQL state or vendor code.
 *
 * @param uniqueStates SQL states of a unique-key violation
 * @param uniqueCodes vendor codes of a unique-key violation
 * @param conflictStates SQL states of a deadlock victim or serialization failure
 * @param conflictCodes vendor codes of the same
 * @param lockTimeoutStates SQL states of a lock wait that timed out
 * @param lockTimeoutCodes vendor codes of the same
 */
public record ErrorCodes(
    Set<String> uniqueStates,
    Set<Integer> uniqueCodes,
    Set<String> conflictStates,
    Set<Integer> conflictCodes,
    Set<String> lockTimeoutStates,
    Set<Integer> lockTimeoutCodes) {

  public ErrorCodes {
    uniqueStates = Set.copyOf(uniqueStates);
    uniqueCodes = Set.copyOf(uniqueCodes);
    conflictStates = Set.copyOf(conflictStates);
    conflictCodes = Set.copyOf(conflictCodes);
    lockTimeoutStates = Set.copyOf(lockTimeoutStates);
    lockTimeoutCodes = Set.copyOf(lockTimeoutCodes);
  }

  /** True when the exception is a unique-key violation. */
  public boolean isUniqueViolation(SQLException e) {
    return matches(e, uniqueStates, uniqueCodes);
  }

  /**
   * True when the database chose this statement's transaction as a deadlock victim (or failed it as
   * a serialization conflict) and rolled it back whole, so running the same unit of work again is
   * safe. The stores retry such a failure a bounded number of times.
   */
  public boolean isRetryableConflict(SQLException e) {
    return matches(e, conflictStates, conflictCodes);
  }

  /** True when a lock wait timed out (the statement failed; the transaction may live on). */
  public boolean isLockTimeout(SQLException e) {
    return matches(e, lockTimeoutStates, lockTimeoutCodes);
  }

  private static boolean matches(SQLException e, Set<String> states, Set<Integer> codes) {
    return (e.getSQLState() != null && states.contains(e.getSQLState()))
        || codes.contains(e.getErrorCode());
  }
}
