package dev.outboxrelay.outbox.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import dev.outboxrelay.outbox.store.dialect.SqlServerOutboxDialect;
import dev.outboxrelay.outbox.testing.RequiresSqlServer;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The store contract on SQL Server ({@value TestDatabases#MSSQL_URL_ENV}, or Testcontainers where
 * Docker answers), database {@value #DATABASE}. Where neither is available every test is reported
 * as skipped, by name, with the reason.
 */
@ExtendWith(RequiresSqlServer.class)
class SqlServerOutboxStoreIT extends OutboxStoreContractTest {
  static final String DATABASE = "outbox_lib_store_it";

  @Override
  protected DataSource dataSource() {
    return TestDatabases.sqlServer(DATABASE);
  }

  @Override
  protected Class<? extends OutboxDialect> expectedDialect() {
    return SqlServerOutboxDialect.class;
  }

  /** No FOR UPDATE on SQL Server: an update lock held by the open transaction. */
  @Override
  protected String lockThreeRowsSql() {
    return "SELECT id FROM outbox_message WITH (UPDLOCK, ROWLOCK) WHERE id IN (?, ?, ?)";
  }

  /**
   * The claim's hints belong to READ COMMITTED in auto-commit; inside a caller's transaction
   * (maybe SNAPSHOT) the batch's guard refuses to run, and nothing is claimed.
   */
  @Test
  void claimRefusesToRunInsideATransaction() throws SQLException {
    TestDatabases.insertReady(ds, 2);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      SQLException e = assertThrows(SQLException.class,
          () -> store.dialect().claim(c, UUID.randomUUID(), 30_000, 10, rs -> rs.getLong(1)));
      assertTrue(e.getMessage().contains("auto-commit"), e.getMessage());
      c.rollback();
    }
    assertEquals(counts(2, 0, 0, 0, 0), store.countByState());
    assertEquals(2, claim(10, LEASE).size(), "the same claim in auto-commit works");
  }

  /** A delay longer than an int of milliseconds (24.8 days) still lands on the right time. */
  @Test
  void delaysBeyondAnIntOfMillisecondsAreExact() {
    java.time.Instant before = store.databaseNow();
    long id = enqueue(message("far-future").deliverAfter(java.time.Duration.ofDays(40)).build());
    java.time.Instant after = store.databaseNow();
    assertBetween(before.plus(java.time.Duration.ofDays(40)), after.plus(java.time.Duration.ofDays(40)),
        row(id).deliverAfter(), "deliver_after");
    assertEquals(List.of(), claim(10, LEASE));
  }
}
