package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.testing.TestDatabases.HTTP_BILLING;
import static dev.outboxrelay.outbox.testing.TestDatabases.KAFKA_ORDERS;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store's operator statements (listing, replay, cancel, bulk replay by filter, stats), run
 * against every database by a nested class of each database's suite ({@code *SuiteIT}). Jobs reach
 * their states through the store's own transitions, so error classes and times of death come from
 * real attempt rows.
 */
public abstract class OutboxAdminStoreContractTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  protected DataSource ds;
  protected JdbcOutboxStore store;
  protected JdbcOutboxAdminStore admin;
  private Outbox outbox;

  /** The migrated database under test; shared by all tests of the nested class. */
  protected abstract DataSource dataSource();

  @BeforeEach
  void setUpStore() {
    ds = dataSource();
    TestDatabases.reset(ds);
    store = JdbcOutboxStore.create(ds);
    admin = new JdbcOutboxAdminStore(ds, store.dialect());
    outbox = new Outbox(OutboxConfig.builder().destinations(HTTP_BILLING, KAFKA_ORDERS).build());
  }

  @AfterEach
  void resetDatabase() {
    TestDatabases.reset(ds);
  }

  // ---- listing -------------------------------------------------------------------------------

  @Test
  void listingFiltersByStateDestinationAndKeyAndPagesByIdWithoutPayloads() {
    long r1 = ready(HTTP_BILLING, "k1");
    long d1 = dead(HTTP_BILLING, "k2", "HTTP 422");
    long s1 = sent(KAFKA_ORDERS, null);
    long r2 = ready(KAFKA_ORDERS, "k1");
    long d2 = dead(KAFKA_ORDERS, null, "Timeout");

    assertEquals(
        List.of(r1, d1, s1, r2, d2), ids(admin.listJobs(new JobQuery(null, null, null, 0, 50))));
    assertEquals(List.of(d1, d2), ids(admin.listJobs(new JobQuery('D', null, null, 0, 50))));
    assertEquals(
        List.of(s1, r2, d2), ids(admin.listJobs(new JobQuery(null, KAFKA_ORDERS, null, 0, 50))));
    assertEquals(List.of(r1, r2), ids(admin.listJobs(new JobQuery(null, null, "k1", 0, 50))));
    assertEquals(List.of(r2), ids(admin.listJobs(new JobQuery('R', KAFKA_ORDERS, "k1", 0, 50))));
    assertEquals(List.of(), ids(admin.listJobs(new JobQuery('W', null, null, 0, 50))));

    assertEquals(List.of(r1, d1), ids(admin.listJobs(new JobQuery(null, null, null, 0, 2))));
    assertEquals(List.of(s1, r2), ids(admin.listJobs(new JobQuery(null, null, null, d1, 2))));
    assertEquals(List.of(d2), ids(admin.listJobs(new JobQuery(null, null, null, r2, 2))));
    assertEquals(List.of(), ids(admin.listJobs(new JobQuery(null, null, null, d2, 2))));

    JobSummary dead = admin.listJobs(new JobQuery('D', HTTP_BILLING, null, 0, 1)).get(0);
    assertAll(
        () -> assertEquals(d1, dead.id()),
        () -> assertEquals("k2", dead.orderingKey()),
        () ->
            assertEquals("HTTP 422", dead.errorClass(), "the class of the attempt that killed it"),
        () -> assertTrue(dead.lastError().contains("HTTP 422"), dead.lastError()),
        () -> assertEquals(1, dead.attempts()),
        () -> assertTrue(dead.failedAt() != null));
    JobSummary fresh = admin.listJobs(new JobQuery('R', HTTP_BILLING, null, 0, 1)).get(0);
    assertNull(fresh.errorClass(), "never failed");
    assertNull(fresh.failedAt());
  }

  /**
   * The console's filters are the database's conditions (they were applied in Java over at most
   * 5,000 scanned rows): the error class exactly, the operation ID containing the text with its
   * LIKE wildcards taken literally, the time range on creation or, for a dead job, its death.
   */
  @Test
  void listingFiltersByErrorClassOperationIdAndTimeInTheDatabase() {
    long plain = ready("order-17", HTTP_BILLING, null);
    long wild = ready("order-1%_x", HTTP_BILLING, null);
    long bang = ready("order-!x", KAFKA_ORDERS, null);
    long d422 = dead(HTTP_BILLING, null, "HTTP 422");
    long d503 = dead(KAFKA_ORDERS, null, "HTTP 503");

    assertEquals(
        List.of(d422), ids(admin.listJobs(query(null, "HTTP 422", null, null, null, 0, 50))));
    assertEquals(
        List.of(), ids(admin.listJobs(query(null, "HTTP%", null, null, null, 0, 50))), "exact");
    assertEquals(
        List.of(d503), ids(admin.listJobs(query('D', "HTTP 503", null, null, null, 0, 50))));

    assertEquals(
        List.of(plain, wild), ids(admin.listJobs(query(null, null, "order-1", null, null, 0, 50))));
    assertEquals(
        List.of(wild),
        ids(admin.listJobs(query(null, null, "%_", null, null, 0, 50))),
        "% and _ are literal");
    assertEquals(List.of(wild), ids(admin.listJobs(query(null, null, "_", null, null, 0, 50))));
    assertEquals(
        List.of(bang),
        ids(admin.listJobs(query(null, null, "!", null, null, 0, 50))),
        "the escape character is literal too");
    assertEquals(
        List.of(),
        ids(admin.listJobs(query(null, null, "ORDER-", null, null, 0, 50))),
        "case-sensitive");
    assertEquals(
        List.of(),
        ids(admin.listJobs(query(null, null, "'; DROP TABLE x; --", null, null, 0, 50))));
    assertEquals(
        List.of(wild),
        ids(admin.listJobs(query(null, null, "order-", null, null, plain, 1))),
        "keyset paging over the matches");

    Instant now = admin.databaseNow();
    assertEquals(
        List.of(plain, wild, bang, d422, d503),
        ids(
            admin.listJobs(
                query(null, null, null, now.minusSeconds(3600), now.plusSeconds(3600), 0, 50))));
    assertEquals(
        List.of(),
        ids(admin.listJobs(query(null, null, null, now.plusSeconds(3600), null, 0, 50))));
    Instant created = admin.findJob(wild).orElseThrow().createdAt();
    assertTrue(
        ids(admin.listJobs(query(null, null, null, created, created.plusMillis(1), 0, 50)))
            .contains(wild),
        "a ready job's time is its creation");
    Instant died = admin.listJobs(query('D', "HTTP 422", null, null, null, 0, 1)).get(0).failedAt();
    assertEquals(
        List.of(d422),
        ids(admin.listJobs(query('D', "HTTP 422", null, died, died.plusMillis(1), 0, 50))),
        "a dead job's time is its death");
    assertEquals(List.of(), ids(admin.listJobs(query('D', "HTTP 422", null, null, died, 0, 50))));
  }

  private static JobQuery query(
      Character state,
      String errorClass,
      String operationIdContains,
      Instant from,
      Instant to,
      long afterId,
      int limit) {
    return new JobQuery(
        state, null, null, errorClass, operationIdContains, from, to, afterId, limit);
  }

  // ---- single replay and cancel --------------------------------------------------------------

  @Test
  void replayMovesOnlyADeadJobBackToReadyWithAFreshBudgetDueNow() {
    long d = dead(HTTP_BILLING, null, "HTTP 422");
    long r = ready(HTTP_BILLING, null);
    long s = sent(HTTP_BILLING, null);
    Instant before = admin.databaseNow();

    assertTrue(admin.replayDead(d));

    StoredJob m = admin.findJob(d).orElseThrow();
    assertAll(
        () -> assertEquals('R', m.state()),
        () -> assertEquals(0, m.attempts(), "a full attempt budget again"),
        () -> assertFalse(m.deliverAfter().isBefore(before.minusMillis(10)), "due now"),
        () -> assertNull(m.claimToken()),
        () ->
            assertTrue(
                m.lastError().contains("HTTP 422"), "the diagnosis stays until the next attempt"));
    assertFalse(admin.replayDead(d), "no longer dead: a second replay changes nothing");
    assertFalse(admin.replayDead(r));
    assertFalse(admin.replayDead(s));
    assertFalse(admin.replayDead(Long.MAX_VALUE));
    assertEquals('S', admin.findJob(s).orElseThrow().state());
    ClaimedJob c = store.claimBatch(ClaimRequest.of(10, LEASE)).get(0);
    assertEquals(d, c.id(), "the replayed job is claimable again (lowest id)");
  }

  @Test
  void cancelMovesOnlyAReadyJobToDeadAndRecordsWhoDidIt() {
    long r = ready(HTTP_BILLING, "k");
    Instant before = admin.databaseNow();

    assertTrue(admin.cancelReady(r, "cancelled by alice via the admin API"));

    StoredJob m = admin.findJob(r).orElseThrow();
    assertEquals('D', m.state());
    assertEquals("cancelled by alice via the admin API", m.lastError());
    List<StoredAttempt> attempts = admin.attempts(r);
    assertEquals(1, attempts.size());
    StoredAttempt a = attempts.get(0);
    assertAll(
        () -> assertEquals(AttemptOutcome.CANCELLED, a.outcome()),
        () -> assertEquals(1, a.attemptNo(), "the attempt that will now not happen"),
        () -> assertEquals("Cancelled", a.errorClass()),
        () -> assertEquals("cancelled by alice via the admin API", a.errorMessage()),
        () -> assertFalse(a.finishedAt().isBefore(before.minusMillis(10))));
    assertEquals(0, m.attempts(), "no send was made");
    assertEquals(1, admin.countDead(new DeadJobFilter(null, "Cancelled", null, null, null)));
    assertFalse(admin.cancelReady(r, "again"), "already dead");
    assertEquals(1, admin.attempts(r).size(), "a refused cancel records nothing");
  }

  @Test
  void cancelRefusesAJobInFlightOrFinishedAndChangesNothing() {
    long w = ready(HTTP_BILLING, null);
    ClaimedJob claimed = store.claimBatch(ClaimRequest.of(1, LEASE)).get(0);
    assertEquals(w, claimed.id());
    long s = sent(HTTP_BILLING, null);

    assertFalse(admin.cancelReady(w, "x"));
    assertFalse(admin.cancelReady(s, "x"));
    assertFalse(admin.cancelReady(Long.MAX_VALUE, "x"));

    StoredJob m = admin.findJob(w).orElseThrow();
    assertEquals('W', m.state());
    assertEquals(claimed.claimToken(), m.claimToken());
    assertEquals(List.of(), admin.attempts(w));
    assertTrue(
        store.markDelivered(claimed, AttemptRecord.success(Duration.ofMillis(1), "200")),
        "the owner's claim is intact");
  }

  // ---- bulk replay by filter -----------------------------------------------------------------

  @Test
  void bulkReplayTakesExactlyTheDeadJobsTheFilterMatches() {
    long b422 = dead(HTTP_BILLING, "cust-1", "HTTP 422");
    long b503 = dead(HTTP_BILLING, "cust-2", "HTTP 503");
    long k422 = dead(KAFKA_ORDERS, "cust-1", "HTTP 422");
    long kTimeout = dead(KAFKA_ORDERS, null, "Timeout");
    long ready = ready(HTTP_BILLING, null);
    long sent = sent(HTTP_BILLING, "cust-1");

    assertEquals(4, admin.countDead(DeadJobFilter.ALL));
    assertEquals(2, admin.countDead(new DeadJobFilter(HTTP_BILLING, null, null, null, null)));
    assertEquals(2, admin.countDead(new DeadJobFilter(null, "HTTP 422", null, null, null)));
    assertEquals(1, admin.countDead(new DeadJobFilter(HTTP_BILLING, "HTTP 422", null, null, null)));
    assertEquals(2, admin.countDead(new DeadJobFilter(null, null, null, null, "cust-1")));
    assertEquals(0, admin.countDead(new DeadJobFilter(null, "nothing like it", null, null, null)));

    DeadJobFilter filter = new DeadJobFilter(null, "HTTP 422", null, null, "cust-1");
    long dryRun = admin.countDead(filter);
    assertEquals(2, dryRun);
    assertEquals(
        dryRun, admin.replayDead(filter, 100), "the real run replays what the dry run counted");

    assertEquals(
        Map.of(b422, 'R', k422, 'R', b503, 'D', kTimeout, 'D', ready, 'R', sent, 'S'),
        states(List.of(b422, k422, b503, kTimeout, ready, sent)));
    assertEquals(0, admin.countDead(filter));
    assertEquals(0, admin.replayDead(filter, 100), "nothing left to replay");
  }

  @Test
  void bulkReplayHonoursItsLimitLowestIdsFirst() {
    long d1 = dead(HTTP_BILLING, null, "HTTP 500");
    long d2 = dead(HTTP_BILLING, null, "HTTP 500");
    long d3 = dead(HTTP_BILLING, null, "HTTP 500");

    assertEquals(2, admin.replayDead(DeadJobFilter.ALL, 2));

    assertEquals(List.of('R', 'R', 'D'), List.of(state(d1), state(d2), state(d3)));
    assertThrows(IllegalArgumentException.class, () -> admin.replayDead(DeadJobFilter.ALL, 0));
  }

  @Test
  void bulkReplayByTimeOfDeathUsesTheFailingAttempt() {
    long old = dead(HTTP_BILLING, null, "HTTP 500");
    long recent = dead(HTTP_BILLING, null, "HTTP 500");
    TestDatabases.update(
        ds,
        "UPDATE outbox_attempt SET finished_at = "
            + TestDatabases.secondsAgo(ds, 7200)
            + " WHERE message_id = ?",
        old);
    Instant now = admin.databaseNow();
    Instant hourAgo = now.minus(Duration.ofHours(1));

    assertEquals(1, admin.countDead(new DeadJobFilter(null, null, null, hourAgo, null)));
    assertEquals(1, admin.countDead(new DeadJobFilter(null, null, hourAgo, null, null)));
    assertEquals(
        2,
        admin.countDead(
            new DeadJobFilter(
                null, null, now.minus(Duration.ofHours(3)), now.plusSeconds(60), null)));
    assertEquals(
        0,
        admin.countDead(
            new DeadJobFilter(
                null, null, now.minus(Duration.ofHours(5)), now.minus(Duration.ofHours(4)), null)));

    assertEquals(1, admin.replayDead(new DeadJobFilter(null, null, null, hourAgo, null), 10));
    assertEquals('R', state(old));
    assertEquals('D', state(recent));
    assertThrows(
        IllegalArgumentException.class, () -> new DeadJobFilter(null, null, now, now, null));
  }

  // ---- stats ---------------------------------------------------------------------------------

  @Test
  void statsCountByDestinationAndStateByErrorClassAndListKeysWithDeadJobs() {
    dead(HTTP_BILLING, "cust-2", "HTTP 422");
    dead(HTTP_BILLING, "cust-1", "HTTP 422");
    dead(KAFKA_ORDERS, "cust-2", "Timeout");
    dead(KAFKA_ORDERS, null, "HTTP 422");
    ready(HTTP_BILLING, "cust-2");
    sent(KAFKA_ORDERS, "cust-3");
    long cancelled = ready(KAFKA_ORDERS, "cust-4");
    assertTrue(admin.cancelReady(cancelled, "cancelled by bob via the admin API"));
    TestDatabases.update(
        ds, "UPDATE outbox_message SET state = 'D' WHERE id = ?", ready(KAFKA_ORDERS, null));

    Map<String, Map<Character, Long>> byDestination = admin.countByDestinationAndState();
    assertEquals(List.of(HTTP_BILLING, KAFKA_ORDERS), List.copyOf(byDestination.keySet()));
    assertEquals(
        Map.of('R', 1L, 'W', 0L, 'S', 0L, 'C', 0L, 'D', 2L), byDestination.get(HTTP_BILLING));
    assertEquals(
        Map.of('R', 0L, 'W', 0L, 'S', 1L, 'C', 0L, 'D', 4L), byDestination.get(KAFKA_ORDERS));

    assertEquals(
        List.of(
            new DeadJobCount("HTTP 422", 3),
            new DeadJobCount("Cancelled", 1),
            new DeadJobCount("Timeout", 1),
            new DeadJobCount(null, 1)),
        sortedNullLast(admin.countDeadByErrorClass()));

    List<DeadOrderingKey> keys = admin.deadOrderingKeys(10);
    assertEquals(
        List.of("cust-2", "cust-1", "cust-4"),
        keys.stream().map(DeadOrderingKey::orderingKey).toList(),
        "oldest dead job first");
    assertEquals(2, keys.get(0).deadCount());
    assertEquals(1, keys.get(1).deadCount());
    assertEquals(
        List.of("cust-2"),
        admin.deadOrderingKeys(1).stream().map(DeadOrderingKey::orderingKey).toList());
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** Groups of equal size have no defined order between them; null (no class) sorts last. */
  private static List<DeadJobCount> sortedNullLast(List<DeadJobCount> counts) {
    for (int i = 1; i < counts.size(); i++) {
      assertTrue(
          counts.get(i - 1).count() >= counts.get(i).count(), "largest group first: " + counts);
    }
    return counts.stream()
        .sorted(
            (a, b) ->
                a.count() != b.count()
                    ? Long.compare(b.count(), a.count())
                    : a.errorClass() == null
                        ? 1
                        : b.errorClass() == null ? -1 : a.errorClass().compareTo(b.errorClass()))
        .toList();
  }

  private long ready(String destination, String orderingKey) {
    return ready("op-" + UUID.randomUUID(), destination, orderingKey);
  }

  private long ready(String operationId, String destination, String orderingKey) {
    OutboxMessage.Builder b =
        OutboxMessage.builder().operationId(operationId).destination(destination).payload("{}");
    if (orderingKey != null) {
      b.orderingKey(orderingKey);
    }
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      long id = outbox.enqueue(c, b.build()).messageId();
      c.commit();
      return id;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Claims the job {@code id}, releasing whatever else the claim took (earlier ready jobs). */
  private ClaimedJob claimOnly(long id) {
    ClaimedJob mine = null;
    for (ClaimedJob c : store.claimBatch(ClaimRequest.of(100, LEASE))) {
      if (c.id() == id) {
        mine = c;
      } else {
        assertTrue(store.release(c.id(), c.claimToken()));
      }
    }
    assertTrue(mine != null, "job " + id + " was claimable");
    return mine;
  }

  private long dead(String destination, String orderingKey, String errorClass) {
    long id = ready(destination, orderingKey);
    assertTrue(
        store.markDead(
            claimOnly(id), new AttemptRecord(Duration.ofMillis(5), errorClass, "boom", null)));
    return id;
  }

  private long sent(String destination, String orderingKey) {
    long id = ready(destination, orderingKey);
    assertTrue(
        store.markDelivered(claimOnly(id), AttemptRecord.success(Duration.ofMillis(5), "200")));
    return id;
  }

  private char state(long id) {
    return admin.findJob(id).orElseThrow().state();
  }

  private Map<Long, Character> states(List<Long> ids) {
    Map<Long, Character> states = new HashMap<>();
    for (long id : ids) {
      states.put(id, state(id));
    }
    return states;
  }

  private static List<Long> ids(List<JobSummary> rows) {
    return rows.stream().map(JobSummary::id).toList();
  }
}
