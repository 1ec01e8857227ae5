package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.testing.TestDatabases.HTTP_BILLING;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The whole store contract on an outbox with configured names ({@code outbox.schema=names_it},
 * {@code outbox.table=orders}: tables {@code names_it.orders_message}, ...), in a database that
 * also holds the default-named outbox and two more named ones ({@code names_it_b.orders}: same
 * table name, other schema; {@code names_it.invoices}: same schema, other table name). Plus: what
 * goes through the named outbox never touches the others, and each has its own Flyway history.
 */
public abstract class ConfiguredNamesContractTest extends OutboxStoreContractTest {
  protected static final OutboxTables NAMES = OutboxTables.of("names_it", "orders");
  protected static final OutboxTables OTHER_SCHEMA = OutboxTables.of("names_it_b", "orders");
  protected static final OutboxTables OTHER_TABLE = OutboxTables.of("names_it", "invoices");

  @Override
  protected OutboxTables tables() {
    return NAMES;
  }

  /**
   * A quarter of the cluster test's jobs: the same statements already ran at full scale on this
   * database in the default-named store contract; here the collisions need only happen on the named
   * tables (the slowest test of the suite, repeated, was a sixth of outbox-lib's test time).
   */
  @Override
  protected int clusterJobs() {
    return super.clusterJobs() / 4;
  }

  /**
   * A quarter, for the reason of {@link #clusterJobs()}: eight claimers on 1,250 rows still collide
   * on the named tables for dozens of batches each (at full scale this was the suite's second
   * slowest test on PostgreSQL).
   */
  @Override
  protected int concurrentClaimJobs() {
    return super.concurrentClaimJobs() / 4;
  }

  /**
   * A quarter, for the reason of {@link #clusterJobs()}: ten jobs per producer still has three
   * claimers taking each key's head as soon as it is enqueued (at full scale, 240 single-job
   * transactions, this was the suite's slowest test on PostgreSQL).
   */
  @Override
  protected int jobsPerProducer() {
    return super.jobsPerProducer() / 4;
  }

  /**
   * Migrates the three named outboxes into {@code database} (which holds the default-named one
   * already); the schema {@code names_it_b} must exist or be creatable by Flyway.
   */
  protected static DataSource withNamedOutboxes(DataSource database) {
    for (OutboxTables t : List.of(NAMES, OTHER_SCHEMA, OTHER_TABLE)) {
      OutboxSchema.migrate(database, t);
    }
    return database;
  }

  private static final Map<Class<?>, DataSource> PREPARED = new ConcurrentHashMap<>();

  /**
   * {@link #withNamedOutboxes} on what {@code database} supplies, once per test class and only when
   * a test runs (after its conditions, e.g. a reachable SQL Server, let it).
   */
  protected DataSource preparedOnce(Supplier<DataSource> database) {
    return PREPARED.computeIfAbsent(getClass(), c -> withNamedOutboxes(database.get()));
  }

  @Test
  void enqueueClaimCompleteAndReapUseTheConfiguredTablesOnly() throws SQLException {
    DataSource database = dataSource();
    long defaultJobs = TestDatabases.countMessages(database);
    Outbox named =
        new Outbox(OutboxConfig.builder().destinations(HTTP_BILLING).tables(NAMES).build());
    String prefix = "names-" + UUID.randomUUID();
    try (Connection c = database.getConnection()) {
      for (int i = 0; i < 2; i++) {
        named.enqueue(
            c,
            OutboxMessage.builder()
                .operationId(prefix + "-" + i)
                .destination(HTTP_BILLING)
                .payload("{\"n\":" + i + "}")
                .build());
      }
    }
    JdbcOutboxStore otherSchema = JdbcOutboxStore.create(database, OTHER_SCHEMA);
    JdbcOutboxStore otherTable = JdbcOutboxStore.create(database, OTHER_TABLE);
    for (JdbcOutboxStore other : List.of(otherSchema, otherTable)) {
      assertEquals(
          List.of(), other.claimBatch(ClaimRequest.of(10, LEASE)), other.tables() + " sees no job");
    }

    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(10, Duration.ofMillis(1)));
    assertEquals(2, claimed.size());
    assertTrue(
        store.markDelivered(claimed.get(0), AttemptRecord.success(Duration.ofMillis(1), "200")));
    awaitDatabaseClockPast(Duration.ofMillis(50));
    assertEquals(new ReapResult(1, 0), store.releaseExpiredLeases(5, 100));

    Map<Character, Long> states = admin.countByState();
    assertEquals(1L, states.get('S'), states.toString());
    assertEquals(1L, states.get('R'), states.toString());
    assertEquals(
        2,
        TestDatabases.queryLong(database, "SELECT COUNT(*) FROM names_it.orders_attempt"),
        "a delivery and an expired lease recorded in the named attempt table");
    assertEquals(
        defaultJobs,
        TestDatabases.countMessages(database),
        "the default-named outbox is untouched");
    for (OutboxTables other : List.of(OTHER_SCHEMA, OTHER_TABLE, OutboxTables.DEFAULT)) {
      assertTrue(
          JdbcOutboxAdminStore.create(database, other).findByOperationId(prefix + "-0").isEmpty(),
          other.toString());
    }
    JdbcReconciliationStore reconciliation = JdbcReconciliationStore.create(database, NAMES);
    assertEquals(
        1,
        reconciliation.upsertConfirmations(
            List.of(new Confirmation(prefix + "-0", HTTP_BILLING, Instant.now(), 1, "test"))));
    assertEquals(
        1,
        TestDatabases.queryLong(
            database,
            "SELECT COUNT(*) FROM names_it.orders_confirmation WHERE operation_id = ?",
            prefix + "-0"));
    TestDatabases.update(
        database,
        "DELETE FROM names_it.orders_confirmation WHERE operation_id LIKE ?",
        prefix + "%");
  }

  @Test
  void eachOutboxHasItsOwnHistoryAndMigratesAgainToNothing() {
    DataSource database = dataSource();
    for (OutboxTables t : List.of(NAMES, OTHER_SCHEMA, OTHER_TABLE, OutboxTables.DEFAULT)) {
      assertEquals(0, OutboxSchema.migrate(database, t), t + " is current: its checksums validate");
    }
    Set<String> histories = new TreeSet<>();
    try (Connection c = database.getConnection();
        ResultSet rs = c.getMetaData().getTables(null, null, "%schema_history", null)) {
      while (rs.next()) {
        String schema =
            rs.getString("TABLE_SCHEM") != null
                ? rs.getString("TABLE_SCHEM")
                : rs.getString("TABLE_CAT");
        histories.add((schema + "." + rs.getString("TABLE_NAME")).toLowerCase(Locale.ROOT));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    assertTrue(
        histories.containsAll(
            List.of(
                "names_it.orders_schema_history",
                "names_it_b.orders_schema_history",
                "names_it.invoices_schema_history")),
        "one history per outbox: " + histories);
    assertTrue(
        histories.stream().anyMatch(h -> h.endsWith(".outbox_schema_history")),
        "the default-named outbox keeps its own: " + histories);
  }

  /** Waits until the database clock has moved {@code by} past now (a lease of 1 ms expires). */
  private void awaitDatabaseClockPast(Duration by) {
    Instant until = admin.databaseNow().plus(by);
    await("the database clock past " + until)
        .atMost(Duration.ofSeconds(10))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(1))
        .until(() -> !admin.databaseNow().isBefore(until));
  }
}
