package dev.outboxrelay.outbox.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.H2OutboxDialect;
import dev.outboxrelay.outbox.store.dialect.MariaDbOutboxDialect;
import dev.outboxrelay.outbox.store.dialect.PostgresOutboxDialect;
import dev.outboxrelay.outbox.store.dialect.SqlServerOutboxDialect;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.outbox.jdbc.ConflictRetry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A deadlock victim's work was rolled back whole, so the store runs it again, a bounded number of
 * times, instead of handing the relay an error (SQL Server 1205, MariaDB 1213, SQLState 40001).
 */
class ConflictRetryTest {
  private static final DataSource H2 = TestDatabases.h2();

  /** H2 whose claim is chosen as a deadlock victim a given number of times first. */
  static final class VictimDialect extends H2OutboxDialect {
    final AtomicInteger victimsLeft;
    final AtomicInteger calls = new AtomicInteger();
    final SQLException failure;

    VictimDialect(int victims, SQLException failure) {
      this.victimsLeft = new AtomicInteger(victims);
      this.failure = failure;
    }

    @Override
    public <T> List<T> claim(Connection c, UUID token, long leaseMillis, int limit, RowMapper<T> mapper)
        throws SQLException {
      calls.incrementAndGet();
      if (victimsLeft.getAndDecrement() > 0) {
        throw failure;
      }
      return super.claim(c, token, leaseMillis, limit, mapper);
    }

    @Override
    public boolean isRetryableConflict(SQLException e) {
      return "40001".equals(e.getSQLState());
    }
  }

  @Test
  void aDeadlockVictimIsRunAgainAndTheCallerSeesOnlyTheResult() {
    TestDatabases.reset(H2);
    List<Long> ready = TestDatabases.insertReady(H2, 3);
    VictimDialect dialect = new VictimDialect(2, deadlock());

    List<ClaimedMessage> claimed =
        new JdbcOutboxStore(H2, dialect).claimBatch(ClaimRequest.of(10, Duration.ofSeconds(30)));

    assertEquals(ready, claimed.stream().map(ClaimedMessage::id).toList());
    assertEquals(3, dialect.calls.get(), "two victims, then the claim that worked");
  }

  @Test
  void retriesAreBoundedAndTheLastConflictReachesTheCaller() {
    TestDatabases.reset(H2);
    TestDatabases.insertReady(H2, 1);
    VictimDialect dialect = new VictimDialect(Integer.MAX_VALUE, deadlock());

    OutboxStoreException e = assertThrows(OutboxStoreException.class,
        () -> new JdbcOutboxStore(H2, dialect).claimBatch(ClaimRequest.of(10, Duration.ofSeconds(30))));

    assertEquals(1 + ConflictRetry.RETRIES, dialect.calls.get());
    assertEquals("40001", assertInstanceOf(SQLException.class, e.getCause()).getSQLState());
    assertEquals(1L, TestDatabases.queryLong(H2, "SELECT COUNT(*) FROM outbox_message WHERE state = 'R'"),
        "nothing claimed");
  }

  @Test
  void otherErrorsAreNotRetried() {
    TestDatabases.reset(H2);
    VictimDialect dialect = new VictimDialect(1, new SQLException("syntax error", "42000", 102));

    assertThrows(OutboxStoreException.class,
        () -> new JdbcOutboxStore(H2, dialect).claimBatch(ClaimRequest.of(10, Duration.ofSeconds(30))));
    assertEquals(1, dialect.calls.get());
  }

  @Test
  void eachDialectRecognisesItsDatabasesDeadlockVictims() {
    assertTrue(new SqlServerOutboxDialect().isRetryableConflict(new SQLException("victim", "40001", 1205)));
    assertTrue(new SqlServerOutboxDialect().isRetryableConflict(new SQLException("victim", null, 1205)));
    assertFalse(new SqlServerOutboxDialect().isRetryableConflict(new SQLException("dup", "23000", 2627)));
    assertTrue(new MariaDbOutboxDialect().isRetryableConflict(new SQLException("deadlock", "40001", 1213)));
    assertTrue(new MariaDbOutboxDialect().isRetryableConflict(new SQLException("deadlock", "HY000", 1213)));
    assertFalse(new MariaDbOutboxDialect().isRetryableConflict(new SQLException("lock wait", "HY000", 1205)),
        "a lock wait timeout rolls back only the statement: not safe to re-run a transaction for");
    assertTrue(new PostgresOutboxDialect().isRetryableConflict(new SQLException("deadlock", "40P01")),
        "a keyed enqueue's share lock on its predecessor can meet a completion batch clearing key waits:"
            + " PostgreSQL rolls the victim's whole transaction back, so it is re-run");
    assertFalse(new PostgresOutboxDialect().isRetryableConflict(new SQLException("dup", "23505")));
    assertFalse(new PostgresOutboxDialect().isRetryableConflict(new SQLException("lock timeout", "55P03")),
        "a lock timeout is not a deadlock victim");
    assertTrue(new SqlServerOutboxDialect().isUniqueViolation(new SQLException("dup", "23000", 2627)));
    assertTrue(new SqlServerOutboxDialect().isUniqueViolation(new SQLException("dup", "23000", 2601)));
    assertTrue(new MariaDbOutboxDialect().isUniqueViolation(new SQLException("dup", "23000", 1062)));
  }

  private static SQLException deadlock() {
    return new SQLException("Transaction was deadlocked on lock resources with another process and has"
        + " been chosen as the deadlock victim. Rerun the transaction.", "40001", 1205);
  }
}
