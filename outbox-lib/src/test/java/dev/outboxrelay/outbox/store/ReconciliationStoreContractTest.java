package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.store.ReconciliationCategory.CONFIRMED_NOT_SENT;
import static dev.outboxrelay.outbox.store.ReconciliationCategory.DEAD;
import static dev.outboxrelay.outbox.store.ReconciliationCategory.DUPLICATE_EFFECTS;
import static dev.outboxrelay.outbox.store.ReconciliationCategory.MATCHED;
import static dev.outboxrelay.outbox.store.ReconciliationCategory.PENDING;
import static dev.outboxrelay.outbox.store.ReconciliationCategory.SENT_UNCONFIRMED;
import static dev.outboxrelay.outbox.testing.TestDatabases.HTTP_BILLING;
import static dev.outboxrelay.outbox.testing.TestDatabases.KAFKA_ORDERS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.dialect.TypeBinding;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reconciliation's SQL (classification, conditional moves, runs, fleet lock), run against every
 * database by a nested class of each database's suite ({@code *SuiteIT}). Rows are crafted directly
 * in the tables, times taken from the database clock.
 */
public abstract class ReconciliationStoreContractTest {
  static final Duration GRACE = Duration.ofMinutes(5);
  protected static final Duration LEASE = Duration.ofMinutes(1);

  protected DataSource ds;
  protected JdbcReconciliationStore store;
  protected JdbcFleetLock locks;
  protected Instant now;

  protected abstract DataSource dataSource();

  @BeforeEach
  void setUp() {
    ds = dataSource();
    clean();
    store = JdbcReconciliationStore.create(ds);
    locks = new JdbcFleetLock(ds, store.dialect());
    now = store.databaseNow().truncatedTo(ChronoUnit.MILLIS);
  }

  @AfterEach
  void clean() {
    TestDatabases.execute(ds, "DELETE FROM outbox_reconciliation_item");
    TestDatabases.execute(ds, "DELETE FROM outbox_reconciliation_run");
    TestDatabases.execute(ds, "DELETE FROM outbox_confirmation");
    TestDatabases.execute(ds, "DELETE FROM outbox_lock");
    TestDatabases.reset(ds);
  }

  // ---- classification ------------------------------------------------------------------------

  @Test
  void classifiesACraftedWindowIntoEveryCategory() {
    Instant sentLongAgo = now.minus(Duration.ofMinutes(10));
    long matchedS = job("m-matched-s", 'S', sentLongAgo, 1, null);
    long matchedC = job("m-matched-c", 'C', sentLongAgo, 1, null);
    long unconfirmed = job("m-unconfirmed", 'S', sentLongAgo, 2, null);
    job("m-sent-recently", 'S', now.minusSeconds(1), 1, null);
    long cnsReady = job("m-cns-r", 'R', null, 1, "HTTP 503");
    long cnsDead = job("m-cns-d", 'D', null, 4, "HTTP 500: gave up after 4 attempts");
    long cnsWorking = job("m-cns-w", 'W', null, 0, null);
    long duplicated = job("m-dup", 'S', sentLongAgo, 1, null);
    long dead = job("m-dead", 'D', null, 1, "HTTP 422: amount missing");
    job("m-ready", 'R', null, 0, null);
    long old = job("m-old", 'S', now.minus(Duration.ofHours(3)), 1, null);
    TestDatabases.update(
        ds,
        "UPDATE outbox_message SET created_at = ? WHERE id = ?",
        now.minus(Duration.ofHours(3)),
        old);
    jobTo(KAFKA_ORDERS, "k-other", 'S', sentLongAgo);

    Instant appliedAt = now.minusSeconds(30);
    store.upsertConfirmations(
        List.of(
            confirmation("m-matched-s", appliedAt, 1),
            confirmation("m-matched-c", appliedAt, 1),
            confirmation("m-cns-r", appliedAt, 1),
            confirmation("m-cns-d", appliedAt, 1),
            confirmation("m-cns-w", appliedAt, 1),
            confirmation("m-dup", appliedAt, 2),
            confirmation("ghost-1", appliedAt, 1),
            confirmation("ghost-dup", appliedAt, 3),
            confirmation("ghost-before-window", now.minus(Duration.ofHours(2)), 1),
            new Confirmation("m-unconfirmed", KAFKA_ORDERS, appliedAt, 1, "table"),
            new Confirmation("k-other", KAFKA_ORDERS, appliedAt, 1, "table")));

    Map<String, WindowEntry> byOp = classify();

    Map<String, ReconciliationCategory> categories = new LinkedHashMap<>();
    byOp.forEach((op, e) -> categories.put(op, e.category()));
    assertEquals(
        Map.ofEntries(
            Map.entry("m-matched-s", MATCHED), Map.entry("m-matched-c", MATCHED),
            Map.entry("m-unconfirmed", SENT_UNCONFIRMED), Map.entry("m-sent-recently", PENDING),
            Map.entry("m-cns-r", CONFIRMED_NOT_SENT), Map.entry("m-cns-d", CONFIRMED_NOT_SENT),
            Map.entry("m-cns-w", CONFIRMED_NOT_SENT), Map.entry("m-dup", DUPLICATE_EFFECTS),
            Map.entry("m-dead", DEAD), Map.entry("m-ready", PENDING),
            Map.entry("ghost-1", CONFIRMED_NOT_SENT), Map.entry("ghost-dup", DUPLICATE_EFFECTS)),
        categories,
        "jobs outside the window, other destinations' rows and old ghosts are left out");
    assertEquals(
        new ArrayList<>(byOp.keySet()).stream().sorted().toList(),
        new ArrayList<>(byOp.keySet()),
        "ordered by operation ID");

    WindowEntry s = byOp.get("m-matched-s");
    assertEquals(matchedS, s.messageId());
    assertEquals('S', s.state());
    assertEquals(1, s.confirmedCount());
    assertEquals(appliedAt, s.confirmedAt());
    assertEquals(sentLongAgo, s.sentAt());
    assertEquals(1, s.attempts());
    assertEquals(matchedC, byOp.get("m-matched-c").messageId());
    assertEquals(unconfirmed, byOp.get("m-unconfirmed").messageId());
    assertEquals(
        0,
        byOp.get("m-unconfirmed").confirmedCount(),
        "a confirmation under another destination does not count");
    assertEquals(cnsReady, byOp.get("m-cns-r").messageId());
    assertEquals(cnsDead, byOp.get("m-cns-d").messageId());
    assertEquals("HTTP 500: gave up after 4 attempts", byOp.get("m-cns-d").lastError());
    assertEquals(cnsWorking, byOp.get("m-cns-w").messageId());
    assertEquals(2, byOp.get("m-dup").confirmedCount());
    assertEquals(duplicated, byOp.get("m-dup").messageId());
    assertEquals(dead, byOp.get("m-dead").messageId());
    assertEquals("HTTP 422: amount missing", byOp.get("m-dead").lastError());
    WindowEntry ghost = byOp.get("ghost-1");
    assertNull(ghost.messageId());
    assertNull(ghost.state());
    assertNull(ghost.attempts());
    assertEquals(HTTP_BILLING, ghost.destination());
    assertEquals(3, byOp.get("ghost-dup").confirmedCount());

    Map<String, ReconciliationCategory> kafka =
        store
            .classifyWindow(
                KAFKA_ORDERS, now.minus(Duration.ofHours(1)), now.plus(Duration.ofHours(1)), GRACE)
            .stream()
            .collect(Collectors.toMap(WindowEntry::operationId, WindowEntry::category));
    assertEquals(
        Map.of("k-other", MATCHED, "m-unconfirmed", CONFIRMED_NOT_SENT),
        kafka,
        "a confirmation under a destination the job does not go to names no job there");
  }

  @Test
  void theGracePeriodDecidesWhenASentJobCountsAsUnconfirmed() {
    job("a", 'S', now.minusSeconds(20), 1, null);
    Instant start = now.minus(Duration.ofHours(1));
    Instant end = now.plus(Duration.ofHours(1));
    assertEquals(
        PENDING,
        store.classifyWindow(HTTP_BILLING, start, end, Duration.ofSeconds(30)).get(0).category());
    assertEquals(
        SENT_UNCONFIRMED,
        store.classifyWindow(HTTP_BILLING, start, end, Duration.ofSeconds(10)).get(0).category());
  }

  @Test
  void upsertReplacesAConfirmationWithTheSourcesCurrentView() {
    job("op", 'S', now.minus(Duration.ofMinutes(10)), 1, null);
    store.upsertConfirmations(List.of(confirmation("op", now.minusSeconds(9), 1)));
    assertEquals(MATCHED, classify().get("op").category());
    store.upsertConfirmations(List.of(confirmation("op", now.minusSeconds(9), 2)));
    assertEquals(DUPLICATE_EFFECTS, classify().get("op").category());
    assertEquals(1L, TestDatabases.queryLong(ds, "SELECT COUNT(*) FROM outbox_confirmation"));
  }

  // ---- conditional moves ---------------------------------------------------------------------

  @Test
  void matchedSentJobBecomesConfirmedOnce() {
    long id = job("op", 'S', now.minus(Duration.ofMinutes(10)), 1, null);
    Instant appliedAt = now.minusSeconds(42);
    store.upsertConfirmations(List.of(confirmation("op", appliedAt, 1)));
    WindowEntry e = classify().get("op");

    assertTrue(store.confirmSent(e));
    assertEquals("C", stateOf(id));
    assertEquals(appliedAt, instantOf("confirmed_at", id));
    assertFalse(store.confirmSent(e), "already C: nothing to do");
    assertEquals(MATCHED, classify().get("op").category(), "C stays matched");
  }

  @Test
  void conditionalMovesLeaveARowThatChangedConcurrentlyAlone() {
    Instant longAgo = now.minus(Duration.ofMinutes(10));
    long matched = job("matched", 'S', longAgo, 1, null);
    long unconfirmed = job("unconfirmed", 'S', longAgo, 1, null);
    long confirmedLater = job("confirmed-later", 'S', longAgo, 1, null);
    long ready = job("ready", 'R', null, 1, "HTTP 503");
    long dead = job("dead", 'D', null, 2, "HTTP 500");
    store.upsertConfirmations(
        List.of(
            confirmation("matched", longAgo, 1),
            confirmation("ready", longAgo, 1),
            confirmation("dead", longAgo, 1)));
    Map<String, WindowEntry> seen = classify();

    // Between the classification and the moves: an operator replays 'matched' (S -> R) ...
    TestDatabases.update(ds, "UPDATE outbox_message SET state = 'R' WHERE id = ?", matched);
    // ... a relay re-delivers 'unconfirmed' (another attempt, S again) ...
    TestDatabases.update(
        ds, "UPDATE outbox_message SET attempts = attempts + 1 WHERE id = ?", unconfirmed);
    // ... the sink's confirmation of 'confirmed-later' arrives ...
    store.upsertConfirmations(List.of(confirmation("confirmed-later", now, 1)));
    // ... a relay claims 'ready' (R -> W) and an operator replays 'dead' (D -> R).
    TestDatabases.update(
        ds,
        "UPDATE outbox_message SET state = 'W', claim_token = ?, lease_until = ?" + " WHERE id = ?",
        UUID.randomUUID(),
        now.plusSeconds(30),
        ready);
    TestDatabases.update(ds, "UPDATE outbox_message SET state = 'R' WHERE id = ?", dead);

    assertFalse(store.confirmSent(seen.get("matched")));
    assertFalse(store.redrive(seen.get("unconfirmed"), "reconciliation: re-driven"));
    assertFalse(store.redrive(seen.get("confirmed-later"), "reconciliation: re-driven"));
    assertFalse(store.acceptConfirmed(seen.get("ready")));
    assertFalse(store.acceptConfirmed(seen.get("dead")));

    assertEquals("R", stateOf(matched));
    assertNull(instantOf("confirmed_at", matched));
    assertEquals("S", stateOf(unconfirmed));
    assertEquals(
        2L,
        TestDatabases.queryLong(
            ds, "SELECT attempts FROM outbox_message WHERE id = ?", unconfirmed));
    assertEquals("S", stateOf(confirmedLater));
    assertEquals("W", stateOf(ready));
    assertEquals("R", stateOf(dead));
    assertEquals("HTTP 500", lastErrorOf(dead));
  }

  @Test
  void redriveSendsTheSameOperationAgainAndAcceptMarksALostCompletionConfirmed() {
    Instant longAgo = now.minus(Duration.ofMinutes(10));
    long unconfirmed = job("unconfirmed", 'S', longAgo, 1, null);
    long dead = job("dead", 'D', null, 3, "lease expired");
    long working = job("working", 'W', null, 0, null);
    Instant appliedAt = now.minusSeconds(5);
    store.upsertConfirmations(
        List.of(confirmation("dead", appliedAt, 1), confirmation("working", appliedAt, 1)));
    Map<String, WindowEntry> seen = classify();

    assertTrue(
        store.redrive(seen.get("unconfirmed"), "reconciliation run 7: sent but unconfirmed"));
    assertEquals("R", stateOf(unconfirmed));
    assertEquals(
        "unconfirmed",
        string("SELECT operation_id FROM outbox_message WHERE id = ?", unconfirmed),
        "the same operation ID, so the sink can deduplicate");
    assertEquals("reconciliation run 7: sent but unconfirmed", lastErrorOf(unconfirmed));
    assertTrue(!instantOf("deliver_after", unconfirmed).isAfter(store.databaseNow()), "due now");

    assertTrue(store.acceptConfirmed(seen.get("dead")));
    assertEquals("C", stateOf(dead));
    assertEquals(appliedAt, instantOf("sent_at", dead));
    assertEquals(appliedAt, instantOf("confirmed_at", dead));
    assertFalse(
        store.acceptConfirmed(seen.get("working")), "an in-flight job is left to its relay");
    assertEquals("W", stateOf(working));
  }

  // ---- runs ----------------------------------------------------------------------------------

  @Test
  void aScheduleSlotIsRunOnceAndARunFinishesWithItsItemsInOneGo() {
    Instant slot = now.truncatedTo(ChronoUnit.MINUTES);
    RunStart start =
        new RunStart(slot.minus(Duration.ofHours(1)), slot, "schedule", "relay-a", slot);
    long id = store.startRun(start).orElseThrow();
    assertTrue(store.scheduleSlotTaken(slot));
    assertTrue(
        store
            .startRun(
                new RunStart(slot.minus(Duration.ofHours(1)), slot, "schedule", "relay-b", slot))
            .isEmpty(),
        "a second run of the same slot is refused by the database");
    assertFalse(store.scheduleSlotTaken(slot.plusSeconds(60)));
    long onDemand1 =
        store
            .startRun(new RunStart(slot.minusSeconds(60), slot, "operator", "relay-a", null))
            .orElseThrow();
    long onDemand2 =
        store
            .startRun(new RunStart(slot.minusSeconds(60), slot, "operator", "relay-b", null))
            .orElseThrow();
    assertTrue(onDemand2 > onDemand1);
    assertTrue(store.latestFinishedRun().isEmpty(), "running runs are no report yet");

    Map<ReconciliationCategory, Integer> counts = counts(3, 1, 1, 0, 1);
    List<ReconciliationItem> items =
        List.of(
            new ReconciliationItem(
                "op-b",
                12L,
                HTTP_BILLING,
                'S',
                SENT_UNCONFIRMED,
                now.minusSeconds(600),
                0,
                null,
                "redriven"),
            new ReconciliationItem(
                "ghost", null, HTTP_BILLING, null, CONFIRMED_NOT_SENT, null, 1, null, null),
            new ReconciliationItem(
                "op-a", 13L, HTTP_BILLING, 'D', DEAD, null, 0, "HTTP 422", null));
    assertTrue(store.finishRun(id, counts, 2, items, null));
    assertFalse(store.finishRun(id, counts, 2, items, null), "finished once");

    ReconciliationRun run = store.findRun(id).orElseThrow();
    assertEquals(slot.minus(Duration.ofHours(1)), run.windowStart());
    assertEquals(slot, run.windowEnd());
    assertEquals(slot, run.scheduleSlot());
    assertEquals("schedule", run.triggeredBy());
    assertEquals("relay-a", run.owner());
    assertNotNull(run.startedAt());
    assertNotNull(run.finishedAt());
    assertEquals(counts, run.counts());
    assertEquals(2, run.pending());
    assertNull(run.error());
    assertEquals(
        List.of("ghost", "op-a", "op-b"),
        run.items().stream().map(ReconciliationItem::operationId).toList(),
        "by category, then operation ID");
    assertEquals(items.get(0), run.items().get(2));
    assertEquals(items.get(1), run.items().get(0));
    assertEquals(id, store.latestFinishedRun().orElseThrow().id());

    assertTrue(
        store.finishRun(
            onDemand1,
            Map.of(),
            0,
            List.of(),
            "confirmation source of 'billing' failed: HTTP 503"));
    assertEquals(
        onDemand1,
        store.latestFinishedRun().orElseThrow().id(),
        "a failed run is the latest report");
    assertEquals(
        id, store.latestSuccessfulRun().orElseThrow().getKey().id(), "but not the latest verdict");
    assertTrue(
        store.latestSuccessfulRun().orElseThrow().getValue().compareTo(Duration.ofMinutes(1)) < 0);
    assertTrue(store.findRun(onDemand1 + 1000).isEmpty());
  }

  // ---- fleet lock ----------------------------------------------------------------------------

  @Test
  void ofTwoContendersForTheLockExactlyOneWins() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 20; round++) {
        String name = "race-" + round;
        if (round % 2 == 1) {
          // Every other round races for an existing lock whose holder crashed (expired lease).
          assertTrue(locks.acquire(name, "crashed", LEASE));
          expire(name);
        }
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Boolean>> results = new ArrayList<>();
        for (String owner : List.of("relay-a", "relay-b")) {
          results.add(
              pool.submit(
                  () -> {
                    go.await();
                    return locks.acquire(name, owner, LEASE);
                  }));
        }
        go.countDown();
        int winners = 0;
        for (Future<Boolean> r : results) {
          winners += r.get(30, TimeUnit.SECONDS) ? 1 : 0;
        }
        assertEquals(1, winners, "round " + round);
        String holder = locks.holder(name).orElseThrow().owner();
        assertTrue(holder.equals("relay-a") || holder.equals("relay-b"), holder);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aLiveLeaseExcludesOthersAndAnExpiredOneIsTakenOver() {
    String name = ReconciliationStore.RECONCILIATION_LOCK;
    assertTrue(locks.acquire(name, "relay-a", LEASE));
    assertFalse(locks.acquire(name, "relay-b", LEASE), "live lease");
    assertTrue(locks.acquire(name, "relay-a", LEASE), "the holder may take it again");
    assertTrue(locks.renew(name, "relay-a", LEASE));
    assertFalse(locks.renew(name, "relay-b", LEASE));
    LockHolder held = locks.holder(name).orElseThrow();
    assertEquals("relay-a", held.owner());
    assertFalse(held.expired());

    expire(name); // relay-a crashed and its lease ran out
    assertTrue(locks.holder(name).orElseThrow().expired());
    assertFalse(locks.renew(name, "relay-a", LEASE), "an expired lease cannot be renewed");
    assertTrue(locks.acquire(name, "relay-b", LEASE), "taken over");
    assertEquals("relay-b", locks.holder(name).orElseThrow().owner());
    locks.release(name, "relay-a"); // the old holder's late release changes nothing
    assertFalse(locks.acquire(name, "relay-a", LEASE));

    locks.release(name, "relay-b");
    assertTrue(locks.acquire(name, "relay-a", LEASE), "free right after its release");
  }

  // ---- helpers -------------------------------------------------------------------------------

  private Map<String, WindowEntry> classify() {
    return store
        .classifyWindow(
            HTTP_BILLING, now.minus(Duration.ofHours(1)), now.plus(Duration.ofHours(1)), GRACE)
        .stream()
        .collect(
            Collectors.toMap(
                WindowEntry::operationId,
                Function.identity(),
                (a, b) -> {
                  throw new AssertionError("operation listed twice: " + a + ", " + b);
                },
                LinkedHashMap::new));
  }

  private static Confirmation confirmation(String op, Instant at, int applied) {
    return new Confirmation(op, HTTP_BILLING, at, applied, "http-ledger");
  }

  static Map<ReconciliationCategory, Integer> counts(
      int matched, int unconfirmed, int notSent, int duplicates, int dead) {
    Map<ReconciliationCategory, Integer> m = new EnumMap<>(ReconciliationCategory.class);
    m.put(MATCHED, matched);
    m.put(SENT_UNCONFIRMED, unconfirmed);
    m.put(CONFIRMED_NOT_SENT, notSent);
    m.put(DUPLICATE_EFFECTS, duplicates);
    m.put(DEAD, dead);
    return m;
  }

  private long job(String op, char state, Instant sentAt, int attempts, String lastError) {
    return jobTo(HTTP_BILLING, op, state, sentAt, attempts, lastError);
  }

  private long jobTo(String destination, String op, char state, Instant sentAt) {
    return jobTo(destination, op, state, sentAt, 1, null);
  }

  private long jobTo(
      String destination, String op, char state, Instant sentAt, int attempts, String lastError) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO outbox_message (operation_id, destination, payload, content_type, state, claim_token,"
                    + " lease_until, sent_at, confirmed_at, attempts, last_error) VALUES (?, ?, '{}', 'application/json',"
                    + " ?, ?, ?, ?, ?, ?, ?)",
                new String[] {"id"})) {
      ps.setString(1, op);
      ps.setString(2, destination);
      ps.setString(3, String.valueOf(state));
      TypeBinding hooks = store.dialect().binding();
      hooks.bindUuid(ps, 4, state == 'W' ? UUID.randomUUID() : null);
      hooks.bindInstant(ps, 5, state == 'W' ? now.plusSeconds(30) : null);
      hooks.bindInstant(ps, 6, sentAt);
      hooks.bindInstant(ps, 7, state == 'C' ? now.minusSeconds(60) : null);
      ps.setInt(8, attempts);
      ps.setString(9, lastError);
      ps.executeUpdate();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        keys.next();
        return keys.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("insert of job " + op + " failed", e);
    }
  }

  private void expire(String lock) {
    TestDatabases.update(
        ds,
        "UPDATE outbox_lock SET lease_until = ? WHERE name = ?",
        store.databaseNow().minusSeconds(1),
        lock);
  }

  private String stateOf(long id) {
    return string("SELECT state FROM outbox_message WHERE id = ?", id);
  }

  private String lastErrorOf(long id) {
    return string("SELECT last_error FROM outbox_message WHERE id = ?", id);
  }

  private String string(String sql, Object param) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setObject(1, param);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(sql, e);
    }
  }

  private Instant instantOf(String column, long id) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT " + column + " FROM outbox_message WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return store.dialect().binding().readInstant(rs, 1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(column, e);
    }
  }
}
