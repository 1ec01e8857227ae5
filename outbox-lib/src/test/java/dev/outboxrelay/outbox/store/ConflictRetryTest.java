package dev.outboxrelay.outbox.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.ConflictRetry;
import dev.outboxrelay.outbox.store.dialect.ErrorCodes;
import dev.outboxrelay.outbox.store.dialect.H2Dialect;
import dev.outboxrelay.outbox.store.dialect.MariaDbDialect;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.store.dialect.PostgresDialect;
import dev.outboxrelay.outbox.store.dialect.SqlServerDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A deadlock victim's work was rolled back whole, so the store runs it again, a bounded number of
 * times, instead of handing the relay an error (SQL Server 1205, MariaDB 1213, SQLState 40001).
 */
class ConflictRetryTest {
  private static final DataSource H2 = TestDatabases.h2();

  /**
   * H2 whose claim is chosen as a deadlock victim a given number of times first: the claim's first
   * statement (its lock of the ready heads) fails on the real database's connections.
   */
  static final class VictimDatabase {
    final AtomicInteger victimsLeft;
    final AtomicInteger calls = new AtomicInteger();
    final SQLException failure;
    final DataSource dataSource;

    VictimDatabase(int victims, SQLException failure) {
      this.victimsLeft = new AtomicInteger(victims);
      this.failure = failure;
      String lockReady = new H2Dialect().jobs(OutboxTables.DEFAULT).lockReadySql();
      this.dataSource =
          (DataSource)
              Proxy.newProxyInstance(
                  getClass().getClassLoader(),
                  new Class<?>[] {DataSource.class},
                  (proxy, method, args) -> {
                    Object result = invoke(H2, method, args);
                    if (!(result instanceof Connection c)) {
                      return result;
                    }
                    return Proxy.newProxyInstance(
                        getClass().getClassLoader(),
                        new Class<?>[] {Connection.class},
                        (p, m, a) -> {
                          if (m.getName().equals("prepareStatement") && lockReady.equals(a[0])) {
                            calls.incrementAndGet();
                            if (victimsLeft.getAndDecrement() > 0) {
                              throw failure;
                            }
                          }
                          return invoke(c, m, a);
                        });
                  });
    }

    JdbcOutboxStore store() {
      return new JdbcOutboxStore(dataSource, new H2Dialect());
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  @Test
  void aDeadlockVictimIsRunAgainAndTheCallerSeesOnlyTheResult() {
    TestDatabases.reset(H2);
    List<Long> ready = TestDatabases.insertReady(H2, 3);
    VictimDatabase victim = new VictimDatabase(2, deadlock());

    List<ClaimedJob> claimed =
        victim.store().claimBatch(ClaimRequest.of(10, Duration.ofSeconds(30)));

    assertEquals(ready, claimed.stream().map(ClaimedJob::id).toList());
    assertEquals(3, victim.calls.get(), "two victims, then the claim that worked");
  }

  @Test
  void retriesAreBoundedAndTheLastConflictReachesTheCaller() {
    TestDatabases.reset(H2);
    TestDatabases.insertReady(H2, 1);
    VictimDatabase victim = new VictimDatabase(Integer.MAX_VALUE, deadlock());

    OutboxStoreException e =
        assertThrows(
            OutboxStoreException.class,
            () -> victim.store().claimBatch(ClaimRequest.of(10, Duration.ofSeconds(30))));

    assertEquals(1 + ConflictRetry.RETRIES, victim.calls.get());
    assertEquals("40001", assertInstanceOf(SQLException.class, e.getCause()).getSQLState());
    assertEquals(
        1L,
        TestDatabases.queryLong(H2, "SELECT COUNT(*) FROM outbox_message WHERE state = 'R'"),
        "nothing claimed");
  }

  @Test
  void otherErrorsAreNotRetried() {
    TestDatabases.reset(H2);
    VictimDatabase victim = new VictimDatabase(1, new SQLException("syntax error", "42000", 102));

    assertThrows(
        OutboxStoreException.class,
        () -> victim.store().claimBatch(ClaimRequest.of(10, Duration.ofSeconds(30))));
    assertEquals(1, victim.calls.get());
  }

  @Test
  void eachDialectRecognisesItsDatabasesDeadlockVictims() {
    ErrorCodes sqlServer = new SqlServerDialect().errors();
    ErrorCodes mariaDb = new MariaDbDialect().errors();
    ErrorCodes postgres = new PostgresDialect().errors();
    assertTrue(sqlServer.isRetryableConflict(new SQLException("victim", "40001", 1205)));
    assertTrue(sqlServer.isRetryableConflict(new SQLException("victim", null, 1205)));
    assertFalse(sqlServer.isRetryableConflict(new SQLException("dup", "23000", 2627)));
    assertTrue(mariaDb.isRetryableConflict(new SQLException("deadlock", "40001", 1213)));
    assertTrue(mariaDb.isRetryableConflict(new SQLException("deadlock", "HY000", 1213)));
    assertFalse(
        mariaDb.isRetryableConflict(new SQLException("lock wait", "HY000", 1205)),
        "a lock wait timeout rolls back only the statement: not safe to re-run a transaction for");
    assertTrue(mariaDb.isLockTimeout(new SQLException("lock wait", "HY000", 1205)));
    assertTrue(
        postgres.isRetryableConflict(new SQLException("deadlock", "40P01")),
        "a keyed enqueue's share lock on its predecessor can meet a completion batch clearing key waits:"
            + " PostgreSQL rolls the victim's whole transaction back, so it is re-run");
    assertFalse(postgres.isRetryableConflict(new SQLException("dup", "23505")));
    assertFalse(
        postgres.isRetryableConflict(new SQLException("lock timeout", "55P03")),
        "a lock timeout is not a deadlock victim");
    assertTrue(postgres.isLockTimeout(new SQLException("lock timeout", "55P03")));
    assertTrue(sqlServer.isUniqueViolation(new SQLException("dup", "23000", 2627)));
    assertTrue(sqlServer.isUniqueViolation(new SQLException("dup", "23000", 2601)));
    assertTrue(mariaDb.isUniqueViolation(new SQLException("dup", "23000", 1062)));
    assertTrue(
        new H2Dialect().errors().isRetryableConflict(new SQLException("deadlock", "40001", 40001)),
        "H2 rolls a deadlock victim's transaction back too");
  }

  private static SQLException deadlock() {
    return new SQLException(
        "Transaction was deadlocked on lock resources with another process and has"
            + " been chosen as the deadlock victim. Rerun the transaction.",
        "40001",
        1205);
  }
}
