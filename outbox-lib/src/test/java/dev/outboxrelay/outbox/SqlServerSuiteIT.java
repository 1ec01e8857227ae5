package dev.outboxrelay.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.inbox.InboxContractTest;
import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ConfiguredNamesContractTest;
import dev.outboxrelay.outbox.store.OutboxAdminStoreContractTest;
import dev.outboxrelay.outbox.store.OutboxStoreContractTest;
import dev.outboxrelay.outbox.store.ReconciliationStoreContractTest;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.SqlServerDialect;
import dev.outboxrelay.outbox.testing.RequiresSqlServer;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every store contract on SQL Server ({@value TestDatabases#MSSQL_URL_ENV}, or Testcontainers where
 * Docker answers): the store, admin and reconciliation contracts in database {@value #STORE},
 * enqueue and large payloads in {@value #ENQUEUE}, the inbox in {@value #INBOX}, the
 * configured-names contract in {@value #NAMES_DATABASE} (schemas {@code names_it} and {@code
 * names_it_b}, created by Flyway). Where no SQL Server is reachable every test is reported as
 * skipped, by name, with the reason ({@link RequiresSqlServer}, inherited by the nested classes).
 */
@ExtendWith(RequiresSqlServer.class)
class SqlServerSuiteIT {
  static final String STORE = "outbox_lib_store_it";
  static final String ENQUEUE = "outbox_lib_enqueue_it";
  static final String INBOX = "outbox_lib_inbox_it";
  static final String NAMES_DATABASE = "outbox_lib_names_it";

  /** No FOR UPDATE on SQL Server: an update lock held by the open transaction. */
  static final String LOCK_THREE_ROWS_SQL =
      "SELECT id FROM outbox_message WITH (UPDLOCK, ROWLOCK) WHERE id IN (?, ?, ?)";

  /** No CREATE TABLE IF NOT EXISTS on SQL Server. */
  static String createTableUnlessExists(String name, String columns) {
    return "IF OBJECT_ID(N'" + name + "') IS NULL CREATE TABLE " + name + " (" + columns + ")";
  }

  /** The claim/complete contract, plus the claim's transaction guard and far-future delays. */
  @Nested
  class Store extends OutboxStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.sqlServer(STORE);
    }

    @Override
    protected Class<? extends Dialect> expectedDialect() {
      return SqlServerDialect.class;
    }

    @Override
    protected String lockThreeRowsSql() {
      return LOCK_THREE_ROWS_SQL;
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
        SQLException e =
            assertThrows(
                SQLException.class,
                () -> store.claimOn(c, ClaimRequest.of(10, Duration.ofSeconds(30))));
        assertTrue(e.getMessage().contains("auto-commit"), e.getMessage());
        c.rollback();
      }
      assertEquals(counts(2, 0, 0, 0, 0), admin.countByState());
      assertEquals(2, claim(10, LEASE).size(), "the same claim in auto-commit works");
    }

    /** A delay longer than an int of milliseconds (24.8 days) still lands on the right time. */
    @Test
    void delaysBeyondAnIntOfMillisecondsAreExact() {
      Instant before = admin.databaseNow();
      long id = enqueue(message("far-future").deliverAfter(Duration.ofDays(40)).build());
      Instant after = admin.databaseNow();
      assertBetween(
          before.plus(Duration.ofDays(40)),
          after.plus(Duration.ofDays(40)),
          row(id).deliverAfter(),
          "deliver_after");
      assertEquals(List.of(), claim(10, LEASE));
    }
  }

  /**
   * The store contract on an outbox with configured names, next to the default-named one; the
   * database is created and migrated on first use, after {@link RequiresSqlServer} let the test
   * run.
   */
  @Nested
  class ConfiguredNames extends ConfiguredNamesContractTest {
    @Override
    protected DataSource dataSource() {
      return preparedOnce(() -> TestDatabases.sqlServer(NAMES_DATABASE));
    }

    @Override
    protected Class<? extends Dialect> expectedDialect() {
      return SqlServerDialect.class;
    }

    @Override
    protected String lockThreeRowsSql() {
      return LOCK_THREE_ROWS_SQL;
    }
  }

  /** The store's operator statements. */
  @Nested
  class AdminStore extends OutboxAdminStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.sqlServer(STORE);
    }
  }

  /** The reconciliation SQL. */
  @Nested
  class Reconciliation extends ReconciliationStoreContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.sqlServer(STORE);
    }
  }

  /** Enqueue in the caller's transaction. */
  @Nested
  class Enqueue extends OutboxEnqueueContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.sqlServer(ENQUEUE);
    }

    @Override
    protected String createOrdersTableSql(String name) {
      return createTableUnlessExists(name, "id BIGINT PRIMARY KEY, note NVARCHAR(100) NOT NULL");
    }
  }

  /** Large payloads by reference. */
  @Nested
  class LargePayload extends LargePayloadContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.sqlServer(ENQUEUE);
    }

    @Override
    protected String createDocumentsTableSql(String name) {
      return createTableUnlessExists(name, "id BIGINT PRIMARY KEY, note NVARCHAR(100) NOT NULL");
    }
  }

  /** The inbox contract. */
  @Nested
  class Inbox extends InboxContractTest {
    @Override
    protected DataSource dataSource() {
      return TestDatabases.sqlServer(INBOX);
    }

    @Override
    protected String createEffectTableSql() {
      return createTableUnlessExists(
          EFFECT, "operation_id NVARCHAR(200) NOT NULL, note NVARCHAR(200)");
    }
  }
}
