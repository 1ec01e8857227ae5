package dev.outboxrelay.outbox.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Inbox#receive} applies each operation ID once, in the caller's transaction, on a real
 * database: repeats, conflicts, rollbacks, handler failures, bad input, and concurrent deliveries
 * of one ID on separate connections. Run per database by a nested class of each database's suite
 * ({@code *SuiteIT}).
 */
public abstract class InboxContractTest {
  /** The receiver's business table: not unique on purpose, so a second effect shows as a row. */
  protected static final String EFFECT = "inbox_it_effect";

  static final String DEST = "http:billing";

  protected DataSource ds;
  protected Inbox inbox;
  private final AtomicInteger handlerRuns = new AtomicInteger();

  protected abstract DataSource dataSource();

  /** Creates the business table unless it exists. SQL Server overrides it. */
  protected String createEffectTableSql() {
    return "CREATE TABLE IF NOT EXISTS "
        + EFFECT
        + " (operation_id VARCHAR(200) NOT NULL, note VARCHAR(200))";
  }

  @BeforeEach
  void setUp() {
    ds = dataSource();
    InboxSchema.migrate(ds);
    TestDatabases.execute(ds, createEffectTableSql());
    clean();
    inbox = new Inbox(InboxConfig.defaults().withMaxPayloadBytes(64));
  }

  @AfterEach
  void clean() {
    TestDatabases.execute(ds, "DELETE FROM " + EFFECT);
    TestDatabases.execute(ds, "DELETE FROM outbox_inbox");
  }

  /** Inserts one effect row and returns its note as the outcome. */
  private final InboxHandler effect =
      (c, d) -> {
        handlerRuns.incrementAndGet();
        try (PreparedStatement ps =
            c.prepareStatement("INSERT INTO " + EFFECT + " (operation_id, note) VALUES (?, ?)")) {
          ps.setString(1, d.operationId());
          ps.setString(2, "invoice of " + d.payloadText());
          ps.executeUpdate();
        }
        return "invoice of " + d.payloadText();
      };

  @Test
  void theFirstDeliveryAppliesAndCommitsWithTheEffect() throws Exception {
    try (Connection c = transaction()) {
      InboxReceipt r = inbox.receive(c, InboxDelivery.of("op-1", DEST, "{\"n\":1}"), effect);
      assertTrue(r.applied());
      assertEquals("invoice of {\"n\":1}", r.outcome());
      assertEquals(1, r.deliveries());
      assertEquals(0, effects("op-1"), "not visible before the caller commits");
      assertEquals(0, inboxRows());
      c.commit();
    }
    assertEquals(1, effects("op-1"));
    assertEquals(1, inboxRows());
  }

  @Test
  void aRepeatReturnsTheFirstOutcomeWithoutRunningTheHandler() throws Exception {
    commitDelivery("op-2", "{\"n\":2}");
    InboxReceipt repeat;
    try (Connection c = transaction()) {
      repeat = inbox.receive(c, InboxDelivery.of("op-2", DEST, "{\"n\":2}"), effect);
      c.commit();
    }
    assertFalse(repeat.applied());
    assertEquals("invoice of {\"n\":2}", repeat.outcome());
    assertEquals(2, repeat.deliveries());
    assertEquals(1, handlerRuns.get());
    assertEquals(1, effects("op-2"));
    assertEquals(2, TestDatabases.queryLong(ds, "SELECT deliveries FROM outbox_inbox"));
  }

  @Test
  void theSameIdInAnotherDestinationIsAnotherOperation() throws Exception {
    commitDelivery("op-3", "{}");
    try (Connection c = transaction()) {
      assertTrue(
          inbox.receive(c, InboxDelivery.of("op-3", "kafka:orders", "{}"), effect).applied());
      c.commit();
    }
    assertEquals(2, effects("op-3"));
  }

  @Test
  void theSameIdWithAnotherPayloadIsAConflictAndTheTransactionStaysUsable() throws Exception {
    commitDelivery("op-4", "{\"n\":4}");
    try (Connection c = transaction()) {
      InboxConflictException e =
          assertThrows(
              InboxConflictException.class,
              () -> inbox.receive(c, InboxDelivery.of("op-4", DEST, "{\"n\":5}"), effect));
      assertEquals("op-4", e.operationId());
      // The caller's transaction goes on.
      assertTrue(inbox.receive(c, InboxDelivery.of("op-5", DEST, "{}"), effect).applied());
      c.commit();
    }
    assertEquals(1, effects("op-4"));
    assertEquals(1, effects("op-5"));
    assertEquals(
        1,
        TestDatabases.queryLong(
            ds, "SELECT deliveries FROM outbox_inbox WHERE operation_id = 'op-4'"),
        "a conflict is not counted");
  }

  @Test
  void aRolledBackDeliveryLeavesNothingAndTheNextOneApplies() throws Exception {
    try (Connection c = transaction()) {
      inbox.receive(c, InboxDelivery.of("op-6", DEST, "{}"), effect);
      c.rollback();
    }
    assertEquals(0, inboxRows());
    commitDelivery("op-6", "{}");
    assertEquals(1, effects("op-6"));
    assertEquals(2, handlerRuns.get());
  }

  @Test
  void aFailingHandlerRecordsNothingAndLeavesTheTransactionUsable() throws Exception {
    try (Connection c = transaction()) {
      InboxHandlerException e =
          assertThrows(
              InboxHandlerException.class,
              () ->
                  inbox.receive(
                      c,
                      InboxDelivery.of("op-7", DEST, "{}"),
                      (conn, d) -> {
                        effect.apply(conn, d);
                        throw new TransientFailureException(
                            "stock service down", Duration.ofSeconds(7));
                      }));
      assertTrue(e.isTransient());
      assertEquals(Duration.ofSeconds(7), e.retryAfter().orElseThrow());
      InboxHandlerException permanent =
          assertThrows(
              InboxHandlerException.class,
              () ->
                  inbox.receive(
                      c,
                      InboxDelivery.of("op-8", DEST, "{}"),
                      (conn, d) -> {
                        throw new IllegalArgumentException("no such customer");
                      }));
      assertFalse(permanent.isTransient());
      // Rolled back to before each call: the effect of op-7 is gone, the transaction goes on.
      inbox.receive(c, InboxDelivery.of("op-9", DEST, "{}"), effect);
      c.commit();
    }
    assertEquals(0, effects("op-7"));
    assertEquals(1, effects("op-9"));
    assertEquals(1, inboxRows());
    // Retried later, it applies.
    commitDelivery("op-7", "{}");
    assertEquals(1, effects("op-7"));
  }

  @Test
  void anOverlongOutcomeIsAHandlerFailure() throws Exception {
    try (Connection c = transaction()) {
      assertThrows(
          InboxHandlerException.class,
          () ->
              inbox.receive(
                  c,
                  InboxDelivery.of("op-10", DEST, "{}"),
                  (conn, d) -> "x".repeat(Inbox.MAX_OUTCOME_CHARS + 1)));
      c.commit();
    }
    assertEquals(0, inboxRows());
  }

  @Test
  void badInputIsRefusedBeforeAnythingIsWritten() throws Exception {
    try (Connection c = transaction()) {
      assertEquals("operationId", refused(c, InboxDelivery.of(null, DEST, "{}")));
      assertEquals("operationId", refused(c, InboxDelivery.of("  ", DEST, "{}")));
      assertEquals("operationId", refused(c, InboxDelivery.of("x".repeat(201), DEST, "{}")));
      assertEquals("operationId", refused(c, InboxDelivery.of("a\nb", DEST, "{}")));
      assertEquals("destination", refused(c, InboxDelivery.of("op", null, "{}")));
      assertEquals("payload", refused(c, InboxDelivery.of("op", DEST, null)));
      assertEquals("payload", refused(c, InboxDelivery.of("op", DEST, "x".repeat(65))));
      // 200 characters and 64 bytes are allowed.
      assertTrue(
          inbox
              .receive(c, InboxDelivery.of("x".repeat(200), DEST, "y".repeat(64)), effect)
              .applied());
      c.commit();
    }
    assertEquals(1, inboxRows());
    assertEquals(1, handlerRuns.get());
  }

  @Test
  void anAutoCommitConnectionIsRefused() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(true);
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> inbox.receive(c, InboxDelivery.of("op-11", DEST, "{}"), effect));
      assertTrue(e.getMessage().contains("auto-commit"), e.getMessage());
    }
    assertEquals(0, inboxRows());
  }

  @Test
  void aConcurrentDeliveryWaitsAndIsARepeatWhenTheFirstCommits() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection first = transaction();
        Connection second = transaction()) {
      assertTrue(inbox.receive(first, InboxDelivery.of("op-12", DEST, "{}"), effect).applied());
      Future<InboxReceipt> other =
          pool.submit(
              () -> {
                InboxReceipt r =
                    inbox.receive(second, InboxDelivery.of("op-12", DEST, "{}"), effect);
                second.commit();
                return r;
              });
      // The second insert waits on the first transaction's uncommitted key.
      Awaitility.await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(3))
          .until(() -> !other.isDone());
      first.commit();
      InboxReceipt r = other.get(20, TimeUnit.SECONDS);
      assertFalse(r.applied(), "already applied");
      assertEquals("invoice of {}", r.outcome());
    } finally {
      pool.shutdownNow();
    }
    assertEquals(1, handlerRuns.get());
    assertEquals(1, effects("op-12"));
  }

  @Test
  void aConcurrentDeliveryAppliesWhenTheFirstRollsBack() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection first = transaction();
        Connection second = transaction()) {
      assertTrue(inbox.receive(first, InboxDelivery.of("op-13", DEST, "{}"), effect).applied());
      Future<InboxReceipt> other =
          pool.submit(
              () -> {
                InboxReceipt r =
                    inbox.receive(second, InboxDelivery.of("op-13", DEST, "{}"), effect);
                second.commit();
                return r;
              });
      Awaitility.await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(3))
          .until(() -> !other.isDone());
      first.rollback();
      assertTrue(other.get(20, TimeUnit.SECONDS).applied(), "the second runs the handler");
    } finally {
      pool.shutdownNow();
    }
    assertEquals(2, handlerRuns.get());
    assertEquals(1, effects("op-13"));
    assertEquals(1, inboxRows());
  }

  @Test
  void manyConcurrentDeliveriesOfOneIdApplyOnce() throws Exception {
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      for (int round = 0; round < 10; round++) {
        String id = "race-" + round;
        List<Future<Boolean>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          results.add(
              pool.submit(
                  () -> {
                    start.await();
                    for (int tries = 0; ; tries++) {
                      try (Connection c = transaction()) {
                        boolean applied =
                            inbox.receive(c, InboxDelivery.of(id, DEST, "{}"), effect).applied();
                        c.commit();
                        return applied;
                      } catch (OutboxStoreException e) {
                        // A deadlock victim (InnoDB, three or more waiters on one key) is retried,
                        // as a
                        // relay's redelivery would be.
                        if (tries > 5) {
                          throw e;
                        }
                      }
                    }
                  }));
        }
        start.countDown();
        int applied = 0;
        for (Future<Boolean> f : results) {
          applied += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
        }
        assertEquals(1, applied, id + ": exactly one delivery applies");
        assertEquals(1, effects(id));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void theLedgerPagesByApplicationTimeWithoutSplittingEqualTimes() throws Exception {
    Set<String> expected = new HashSet<>();
    for (int i = 0; i < 7; i++) {
      // One transaction per pair: the two rows of a pair may share applied_at.
      try (Connection c = transaction()) {
        for (int j = 0; j < 2; j++) {
          String id = "ledger-" + i + "-" + j;
          inbox.receive(c, new InboxDelivery(id, DEST, "{}".getBytes(), 40L + i), effect);
          expected.add(id);
        }
        c.commit();
      }
    }
    commitDelivery("other-dest", "{}", "kafka:orders");
    InboxLedger ledger = new InboxLedger(ds);
    Set<String> seen = new HashSet<>();
    Instant since = null;
    int pages = 0;
    do {
      InboxLedgerPage page = ledger.page(since, 3, DEST);
      for (InboxLedgerEntry e : page.items()) {
        assertTrue(seen.add(e.operationId()), "no entry twice: " + e.operationId());
        assertEquals(DEST, e.destination());
        assertEquals(1, e.appliedCount());
        assertTrue(e.messageId() >= 40);
        if (since != null) {
          assertTrue(e.appliedAt().isAfter(since));
        }
      }
      since = page.next();
      pages++;
    } while (since != null && pages < 50);
    assertEquals(expected, seen);
    assertEquals(15, ledger.totals().applied());
    assertEquals(15, ledger.page(null, 100, null).items().size());
  }

  @Test
  void retentionDeletesOldRowsInBatches() throws Exception {
    for (int i = 0; i < 5; i++) {
      commitDelivery("old-" + i, "{}");
    }
    commitDelivery("new", "{}");
    TestDatabases.execute(
        ds,
        "UPDATE outbox_inbox SET applied_at = "
            + TestDatabases.secondsAgo(ds, 3 * 86_400)
            + " WHERE operation_id LIKE 'old-%'");
    InboxRetention retention = new InboxRetention(ds, Duration.ofDays(1), 2);
    assertEquals(2, retention.purge(1), "one batch of two");
    assertEquals(3, retention.purge(100));
    assertEquals(1, inboxRows());
    assertEquals(0, retention.purge(100));
  }

  @Test
  void withAConfirmationSourceEachApplicationCountsInOutboxConfirmation() throws Exception {
    TestDatabases.execute(ds, "DELETE FROM outbox_confirmation");
    Inbox confirming = new Inbox(InboxConfig.defaults().withConfirmationSource("inbox"));
    try (Connection c = transaction()) {
      confirming.receive(c, InboxDelivery.of("conf-1", DEST, "{}"), effect);
      c.rollback();
    }
    assertEquals(0, TestDatabases.queryLong(ds, "SELECT COUNT(*) FROM outbox_confirmation"));
    for (int i = 0; i < 2; i++) {
      try (Connection c = transaction()) {
        confirming.receive(c, InboxDelivery.of("conf-1", DEST, "{}"), effect);
        c.commit();
      }
    }
    assertEquals(
        1,
        TestDatabases.queryLong(
            ds,
            "SELECT applied_count FROM outbox_confirmation"
                + " WHERE operation_id = 'conf-1' AND destination = '"
                + DEST
                + "' AND source = 'inbox'"));
    TestDatabases.execute(ds, "DELETE FROM outbox_confirmation");
  }

  @Test
  void theMigrationIsCurrentAndValidates() {
    assertEquals(0, InboxSchema.migrate(ds));
    InboxSchema.validate(ds);
  }

  private String refused(Connection c, InboxDelivery d) {
    return assertThrows(InvalidDeliveryException.class, () -> inbox.receive(c, d, effect)).field();
  }

  private void commitDelivery(String id, String payload) throws SQLException {
    commitDelivery(id, payload, DEST);
  }

  private void commitDelivery(String id, String payload, String destination) throws SQLException {
    try (Connection c = transaction()) {
      inbox.receive(c, InboxDelivery.of(id, destination, payload), effect);
      c.commit();
    }
  }

  protected Connection transaction() throws SQLException {
    Connection c = ds.getConnection();
    c.setAutoCommit(false);
    return c;
  }

  private long effects(String id) {
    return TestDatabases.queryLong(
        ds, "SELECT COUNT(*) FROM " + EFFECT + " WHERE operation_id = ?", id);
  }

  private long inboxRows() {
    return TestDatabases.queryLong(ds, "SELECT COUNT(*) FROM outbox_inbox");
  }
}
