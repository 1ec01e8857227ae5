package dev.outboxrelay.outbox.store;

import static dev.outboxrelay.outbox.testing.TestDatabases.HTTP_BILLING;
import static dev.outboxrelay.outbox.testing.TestDatabases.KAFKA_ORDERS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.schema.TableRendering;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.outbox.testing.TimeSpans;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The claim/complete contract of docs/design.md, run against every database by a nested class of
 * each database's suite ({@code *SuiteIT}). All times are compared with the database clock ({@link
 * OutboxStore#databaseNow()}).
 */
public abstract class OutboxStoreContractTest {
  protected static final Duration LEASE = Duration.ofSeconds(30);
  protected static final Duration SHORT_LEASE = Duration.ofMillis(200);

  /** A relay instance name as {@code RelayService} makes them: host/pid/random. */
  protected static final String RELAY_INSTANCE = "relay-7f9c-host/4242/1a2b3c4d";

  /** Slack for comparing two database timestamps taken by different statements. */
  private static final Duration CLOCK_SLACK = Duration.ofMillis(10);

  private static final ObjectMapper JSON = new ObjectMapper();

  protected DataSource ds;
  protected JdbcOutboxStore store;

  /**
   * The same outbox's counts, jobs and attempts, which the tests read to see what a transition did.
   */
  protected JdbcOutboxAdminStore admin;

  protected Outbox outbox;

  /** The migrated database under test; shared by all tests of the nested class. */
  protected abstract DataSource dataSource();

  /** The dialect {@link JdbcOutboxStore#create} must detect for {@link #dataSource()}. */
  protected abstract Class<? extends Dialect> expectedDialect();

  /**
   * A query that row-locks the jobs with three given ids until its transaction ends, as another
   * claimer would. Standard {@code FOR UPDATE}; SQL Server overrides it with a table hint.
   */
  protected String lockThreeRowsSql() {
    return "SELECT id FROM outbox_message WHERE id IN (?, ?, ?) FOR UPDATE";
  }

  /**
   * The names of the outbox under test; default {@link OutboxTables#DEFAULT}. With other names
   * {@link #store} is created for them on {@link #dataSource()}, and {@link #ds} (which the tests'
   * own SQL and extra stores use, written with the default names) renders for them.
   */
  protected OutboxTables tables() {
    return OutboxTables.DEFAULT;
  }

  /**
   * Jobs of {@link #relaysClaimingCompletingAndReapingTogetherDeliverEveryJobOnceWithoutErrors}:
   * enough for six relays to collide on claims, completions and reaps for several seconds.
   */
  protected int clusterJobs() {
    return 2_000;
  }

  /**
   * Jobs of {@link #concurrentClaimersClaimEveryJobExactlyOnce}: enough for eight claimers to
   * collide on the same ready rows for many batches.
   */
  protected int concurrentClaimJobs() {
    return 5_000;
  }

  /**
   * Jobs per producer of {@link
   * #concurrentEnqueuersAndClaimersKeepEveryKeyInOrderAndLeaveNoJobWaiting} (each its own
   * transaction): enough for the claimers to catch up with the producers of a key again and again.
   */
  protected int jobsPerProducer() {
    return 40;
  }

  private static final Map<DataSource, DataSource> RENDERED = new ConcurrentHashMap<>();

  @BeforeEach
  void setUpStore() {
    DataSource database = dataSource();
    ds = RENDERED.computeIfAbsent(database, d -> TableRendering.dataSource(d, tables()));
    TestDatabases.reset(ds);
    store = JdbcOutboxStore.create(database, tables());
    admin = new JdbcOutboxAdminStore(database, store.dialect(), tables());
    outbox = new Outbox(OutboxConfig.builder().destinations(HTTP_BILLING, KAFKA_ORDERS).build());
  }

  @AfterEach
  void resetDatabase() {
    TestDatabases.reset(ds);
  }

  @Test
  void detectsTheDialectOfTheDatabase() {
    assertInstanceOf(expectedDialect(), store.dialect());
  }

  // ---- enqueue and read back -----------------------------------------------------------------

  @Test
  void enqueuedJobReadsBackWithEveryColumn() throws Exception {
    Instant before = admin.databaseNow();
    long id =
        enqueue(
            OutboxMessage.builder()
                .operationId("order-42/billing")
                .destination(HTTP_BILLING)
                .payload("{\"order\":42,\"total\":\"9.90\"}")
                .orderingKey("customer-7")
                .header("X-Tenant", "acme")
                .header("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .build());
    Instant after = admin.databaseNow();

    StoredJob m = row(id);
    assertAll(
        () -> assertEquals(id, m.id()),
        () -> assertEquals("order-42/billing", m.operationId()),
        () -> assertEquals(HTTP_BILLING, m.destination()),
        () -> assertEquals("customer-7", m.orderingKey()),
        () -> assertEquals("{\"order\":42,\"total\":\"9.90\"}", m.payload()),
        () -> assertEquals("application/json", m.contentType()),
        () ->
            assertEquals(
                Map.of(
                    "X-Tenant",
                    "acme",
                    "traceparent",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                headers(m.headersJson())),
        () -> assertEquals('R', m.state()),
        () -> assertNull(m.claimToken()),
        () -> assertNull(m.leaseUntil()),
        () -> assertEquals(0, m.attempts()),
        () -> assertNull(m.lastError()),
        () -> assertBetween(before, after, m.createdAt(), "created_at"),
        () ->
            assertEquals(
                m.createdAt(), m.deliverAfter(), "deliver_after defaults to the commit time"),
        () -> assertNull(m.claimedAt()),
        () -> assertNull(m.sentAt()),
        () -> assertNull(m.confirmedAt()));
    assertEquals(Optional.of(m), admin.findByOperationId("order-42/billing"));
    assertEquals(Optional.empty(), admin.findByOperationId("order-43/billing"));
    assertEquals(Optional.empty(), admin.findJob(id + 1000));

    ClaimedJob c = claimExactlyOne(LEASE);
    assertAll(
        () -> assertEquals(id, c.id()),
        () -> assertEquals("order-42/billing", c.operationId()),
        () -> assertEquals(HTTP_BILLING, c.destination()),
        () -> assertEquals("customer-7", c.orderingKey()),
        () -> assertEquals("{\"order\":42,\"total\":\"9.90\"}", c.payload()),
        () -> assertEquals("application/json", c.contentType()),
        () ->
            assertEquals(
                Map.of(
                    "X-Tenant",
                    "acme",
                    "traceparent",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                c.headers()),
        () -> assertEquals(0, c.attempts()),
        () -> assertEquals(1, c.attemptNo()),
        () -> assertEquals(m.createdAt(), c.createdAt()));
  }

  @Test
  void jobWithoutHeadersOrKeyStoresNullsAndKeepsNonAsciiText() {
    long id =
        enqueue(
            OutboxMessage.builder()
                .operationId("mail-1")
                .destination(KAFKA_ORDERS)
                .payload("Grüße ✓ — 注文")
                .contentType("text/plain; charset=utf-8")
                .build());

    StoredJob m = row(id);
    assertNull(m.headersJson());
    assertNull(m.orderingKey());
    assertEquals("Grüße ✓ — 注文", m.payload());
    assertEquals("text/plain; charset=utf-8", m.contentType());

    ClaimedJob c = claimExactlyOne(LEASE);
    assertEquals(Map.of(), c.headers());
    assertNull(c.orderingKey());
    assertEquals("Grüße ✓ — 注文", c.payload());
  }

  @Test
  void delayedJobIsClaimableOnlyOnceItsDeliverAfterHasPassed() {
    Instant before = admin.databaseNow();
    long id = enqueue(message("delayed-1").deliverAfter(Duration.ofHours(1)).build());
    Instant after = admin.databaseNow();

    StoredJob m = row(id);
    assertBetween(
        before.plus(Duration.ofHours(1)),
        after.plus(Duration.ofHours(1)),
        m.deliverAfter(),
        "deliver_after = commit time + delay");
    assertEquals(List.of(), claim(10, LEASE), "not claimable before deliver_after");
    assertEquals('R', row(id).state());

    TestDatabases.makeDue(ds, id, 1);
    assertEquals(List.of(id), ids(claim(10, LEASE)));
  }

  @Test
  void delayedJobIsClaimedOnceTheDatabaseClockPassesItsDeliverAfter() {
    long id = enqueue(message("delayed-2").deliverAfter(Duration.ofMillis(1_500)).build());
    Instant due = row(id).deliverAfter();
    AtomicReference<Instant> lastEmptyClaim = new AtomicReference<>();
    List<ClaimedJob> claimed =
        await("the delayed job claimed")
            .atMost(Duration.ofSeconds(30))
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(50))
            .until(
                () -> {
                  Instant before = admin.databaseNow();
                  List<ClaimedJob> batch = claim(10, LEASE);
                  if (batch.isEmpty()) {
                    lastEmptyClaim.set(before);
                  }
                  return batch;
                },
                batch -> !batch.isEmpty());
    assertEquals(List.of(id), ids(claimed), "claimed once due");
    assertTrue(lastEmptyClaim.get() != null, "the first claims found it not yet due");
    assertFalse(
        row(id).claimedAt().isBefore(due),
        "claimed_at "
            + row(id).claimedAt()
            + " is not before deliver_after "
            + due
            + " (both database clock)");
  }

  // ---- FIFO per ordering key -------------------------------------------------------------------

  @Test
  void claimTakesOnlyTheEarliestUnfinishedJobOfEachKey() {
    long a1 = enqueue(message("fifo-a1").orderingKey("a").build());
    long b1 = enqueue(message("fifo-b1").orderingKey("b").build());
    long a2 = enqueue(message("fifo-a2").orderingKey("a").build());
    long none = enqueue(message("fifo-none").build());
    long a3 = enqueue(message("fifo-a3").orderingKey("a").build());

    List<ClaimedJob> first = claim(10, LEASE);
    assertEquals(
        List.of(a1, b1, none), ids(first), "one job per key; keyless jobs are not held back");
    assertEquals(List.of(), claim(10, LEASE), "a2 waits while a1 is leased");

    ClaimedJob claimedA1 = first.get(0);
    assertTrue(store.markDelivered(claimedA1, AttemptRecord.success(Duration.ofMillis(1), "200")));
    assertEquals(List.of(a2), ids(claim(10, LEASE)), "a2 follows once a1 is sent, a3 still waits");
    assertEquals('R', row(a3).state());
  }

  @Test
  void aJobInBackoffHoldsBackItsKeyOnly() {
    long a1 = enqueue(message("backoff-a1").orderingKey("a").build());
    long a2 = enqueue(message("backoff-a2").orderingKey("a").build());
    long b1 = enqueue(message("backoff-b1").orderingKey("b").build());
    ClaimedJob c = claim(10, LEASE).get(0);
    assertEquals(a1, c.id());
    assertTrue(
        store.markForRetry(
            c,
            Duration.ofHours(1),
            new AttemptRecord(Duration.ofMillis(5), "HTTP 503", "unavailable", "503")));

    assertEquals(
        List.of(),
        ids(claim(10, LEASE)).stream().filter(id -> id == a2).toList(),
        "a2 must not overtake a1 while a1 waits to be retried");
    assertEquals('R', row(a2).state());
    assertEquals('W', row(b1).state(), "key b was claimed in the first claim and is not held back");
  }

  @Test
  void aDeadJobDoesNotBlockItsKey() {
    long a1 = enqueue(message("dead-a1").orderingKey("a").build());
    long a2 = enqueue(message("dead-a2").orderingKey("a").build());
    ClaimedJob c = claimExactlyOne(LEASE);
    assertEquals(a1, c.id());
    assertTrue(
        store.markDead(
            c, new AttemptRecord(Duration.ofMillis(5), "HTTP 400", "bad request", "400")));
    assertEquals(List.of(a2), ids(claim(10, LEASE)), "the key moves on past its dead job");
    assertEquals('D', row(a1).state(), "the dead job stays dead for an operator to see");
  }

  // ---- key heads (key_wait, docs/design.md "Ordering keys") -----------------------------------

  @Test
  void enqueueMarksEveryJobBehindAnUnfinishedOneOfItsKeyAsWaiting() {
    long a1 = enqueue(message("wait-a1").orderingKey("a").build());
    long a2 = enqueue(message("wait-a2").orderingKey("a").build());
    long b1 = enqueue(message("wait-b1").orderingKey("b").build());
    long none = enqueue(message("wait-none").build());
    long a3 = enqueue(message("wait-a3").orderingKey("a").build());
    assertEquals(List.of(false, true, false, false, true), keyWait(a1, a2, b1, none, a3));
  }

  @Test
  void aSentHeadHandsItsKeyToTheNextJobOnly() {
    long a1 = enqueue(message("sent-a1").orderingKey("a").build());
    long a2 = enqueue(message("sent-a2").orderingKey("a").build());
    long a3 = enqueue(message("sent-a3").orderingKey("a").build());
    ClaimedJob c = claimExactlyOne(LEASE);
    assertEquals(a1, c.id());
    assertEquals(
        Set.of(a1),
        store.markDeliveredAll(
            List.of(new DeliveredJob(c, AttemptRecord.success(Duration.ofMillis(1), "200")))));
    assertEquals(List.of(false, true), keyWait(a2, a3), "a2 is the head now, a3 still waits");
    ClaimedJob next = claimExactlyOne(LEASE);
    assertEquals(a2, next.id());
    assertTrue(store.markDelivered(next, AttemptRecord.success(Duration.ofMillis(1), "200")));
    assertEquals(List.of(false), keyWait(a3));
    assertEquals(List.of(a3), ids(claim(10, LEASE)));
  }

  @Test
  void aRetriedHeadStaysTheHeadAndADeadOneHandsOn() {
    long a1 = enqueue(message("retry-a1").orderingKey("a").build());
    long a2 = enqueue(message("retry-a2").orderingKey("a").build());
    ClaimedJob c = claimExactlyOne(LEASE);
    assertTrue(
        store.markForRetry(
            c, Duration.ZERO, new AttemptRecord(Duration.ofMillis(1), "HTTP 503", "busy", "503")));
    assertEquals(List.of(false, true), keyWait(a1, a2), "back to ready, still the head");
    ClaimedJob again = claimExactlyOne(LEASE);
    assertEquals(a1, again.id());
    assertTrue(
        store.markDead(again, new AttemptRecord(Duration.ofMillis(1), "HTTP 400", "bad", "400")));
    assertEquals(List.of(false), keyWait(a2), "a dead job does not block its key");
    assertEquals(List.of(a2), ids(claim(10, LEASE)));
  }

  @Test
  void anExpiredLeaseKeepsItsHeadAndItsLastExpiryHandsOn() {
    long a1 = enqueue(message("expiry-a1").orderingKey("a").build());
    long a2 = enqueue(message("expiry-a2").orderingKey("a").build());
    ClaimedJob c = claimExactlyOne(SHORT_LEASE);
    awaitDatabaseClockPast(c.leaseUntil());
    assertEquals(new ReapResult(1, 0), store.releaseExpiredLeases(2, 100));
    assertEquals(
        List.of(false, true),
        keyWait(a1, a2),
        "the expired head is ready again and still the head");
    ClaimedJob second = claimExactlyOne(SHORT_LEASE);
    assertEquals(a1, second.id());
    awaitDatabaseClockPast(second.leaseUntil());
    assertEquals(new ReapResult(0, 1), store.releaseExpiredLeases(2, 100));
    assertEquals('D', row(a1).state());
    assertEquals(List.of(false), keyWait(a2));
    assertEquals(List.of(a2), ids(claim(10, LEASE)));
  }

  @Test
  void cancellingTheReadyHeadHandsOnAndCancellingAWaitingJobDoesNot() {
    long a1 = enqueue(message("cancel-a1").orderingKey("a").build());
    long a2 = enqueue(message("cancel-a2").orderingKey("a").build());
    long a3 = enqueue(message("cancel-a3").orderingKey("a").build());
    assertTrue(admin.cancelReady(a2, "not wanted"));
    assertEquals(List.of(false, true), keyWait(a1, a3), "a1 is still the head");
    assertTrue(admin.cancelReady(a1, "not wanted either"));
    assertEquals(List.of(false), keyWait(a3));
    assertEquals(List.of(a3), ids(claim(10, LEASE)));
  }

  @Test
  void aReplayedJobGoesBeforeTheLaterReadyJobsOfItsKeyAndAfterTheSentOnes() {
    long a1 = enqueue(message("replay-a1").orderingKey("a").build());
    long a2 = enqueue(message("replay-a2").orderingKey("a").build());
    long a3 = enqueue(message("replay-a3").orderingKey("a").build());
    ClaimedJob c = claimExactlyOne(LEASE);
    assertTrue(
        store.markDead(c, new AttemptRecord(Duration.ofMillis(1), "HTTP 400", "bad", "400")));
    ClaimedJob c2 = claimExactlyOne(LEASE);
    assertEquals(a2, c2.id());
    assertTrue(store.markDelivered(c2, AttemptRecord.success(Duration.ofMillis(1), "200")));

    assertTrue(admin.replayDead(a1), "replayed after a2 was sent, while a3 is the ready head");
    assertEquals(List.of(false, false), keyWait(a1, a3));
    ClaimedJob replayed = claimExactlyOne(LEASE);
    assertEquals(a1, replayed.id(), "the replayed job is earlier than a3: it goes first, a3 waits");
    assertEquals(List.of(), claim(10, LEASE));
    assertTrue(store.markDelivered(replayed, AttemptRecord.success(Duration.ofMillis(1), "200")));
    assertEquals(List.of(a3), ids(claim(10, LEASE)));
  }

  @Test
  void aBatchedCompletionHandsEachKeyItsNextJobUnderTheHandOversClaim() {
    long a1 = enqueue(message("handover-a1").orderingKey("a").build());
    long b1 = enqueue(message("handover-b1").orderingKey("b").build());
    long a2 = enqueue(message("handover-a2").orderingKey("a").build());
    long b2 = enqueue(message("handover-b2").orderingKey("b").build());
    long a3 = enqueue(message("handover-a3").orderingKey("a").build());
    List<ClaimedJob> heads = claim(10, LEASE);
    assertEquals(List.of(a1, b1), ids(heads));

    ClaimRequest handOver = ClaimRequest.of(1, LEASE);
    DeliveryBatch batch =
        store.markDeliveredAll(
            heads.stream()
                .map(m -> new DeliveredJob(m, AttemptRecord.success(Duration.ofMillis(1), "200")))
                .toList(),
            new HandOver(handOver, Set.of("a", "b")));
    assertEquals(Set.of(a1, b1), batch.completed());
    assertEquals(
        List.of(a2), ids(batch.handedOver()), "at most the hand-over's limit, key a first");
    ClaimedJob next = batch.handedOver().get(0);
    assertEquals(handOver.token(), next.claimToken());
    assertEquals('W', row(a2).state());
    assertEquals(next.claimToken(), row(a2).claimToken());
    assertEquals(
        List.of(b2), ids(claim(10, LEASE)), "b2 became the head without being handed over");

    DeliveryBatch last =
        store.markDeliveredAll(
            List.of(new DeliveredJob(next, AttemptRecord.success(Duration.ofMillis(1), "200"))),
            null);
    assertEquals(List.of(), last.handedOver(), "no hand-over asked (no room): nothing claimed");
    assertEquals(List.of(a3), ids(claim(10, LEASE)), "the next claim finds it");
  }

  @Test
  void aHandOverClaimsEachKeysRunUpToItsFirstJobNotDue() {
    long a1 = enqueue(message("run-a1").orderingKey("a").build());
    long b1 = enqueue(message("run-b1").orderingKey("b").build());
    long a2 = enqueue(message("run-a2").orderingKey("a").build());
    long a3 = enqueue(message("run-a3").orderingKey("a").build());
    long b2 = enqueue(message("run-b2").orderingKey("b").build());
    long a4 = enqueue(message("run-a4").orderingKey("a").deliverAfter(Duration.ofHours(1)).build());
    long a5 = enqueue(message("run-a5").orderingKey("a").build());
    List<ClaimedJob> heads = claim(10, LEASE);
    assertEquals(List.of(a1, b1), ids(heads));

    ClaimRequest claim = ClaimRequest.of(10, LEASE);
    DeliveryBatch batch =
        store.markDeliveredAll(delivered(heads), new HandOver(claim, Set.of("a")));
    assertEquals(Set.of(a1, b1), batch.completed());
    assertEquals(
        List.of(a2, a3),
        ids(batch.handedOver()),
        "key a's run ends before a4, which is not due; key b was not handed over");
    for (ClaimedJob m : batch.handedOver()) {
      assertEquals(claim.token(), m.claimToken());
      assertEquals('W', row(m.id()).state());
    }
    assertEquals(List.of(true, true), keyWait(a3, a5), "a run's later jobs still wait behind it");
    assertEquals('R', row(a4).state());
    assertEquals(List.of(b2), ids(claim(10, LEASE)), "b2 became the head and was claimable");

    DeliveryBatch next =
        store.markDeliveredAll(
            delivered(batch.handedOver()), new HandOver(ClaimRequest.of(10, LEASE), Set.of("a")));
    assertEquals(Set.of(a2, a3), next.completed());
    assertEquals(List.of(), next.handedOver(), "a4 is the head now, and not due");
    assertEquals(List.of(false, true), keyWait(a4, a5));
    assertEquals(List.of(), claim(10, LEASE));
  }

  @Test
  void aKeysRunStopsBeforeALeasedJobOfItsKey() {
    long a1 = enqueue(message("leased-run-a1").orderingKey("a").build());
    long a2 = enqueue(message("leased-run-a2").orderingKey("a").build());
    long a3 = enqueue(message("leased-run-a3").orderingKey("a").build());
    long a4 = enqueue(message("leased-run-a4").orderingKey("a").build());
    long a5 = enqueue(message("leased-run-a5").orderingKey("a").build());
    ClaimedJob first = claimExactlyOne(LEASE);
    assertEquals(a1, first.id());
    ClaimRequest runClaim = ClaimRequest.of(3, LEASE);
    List<ClaimedJob> run =
        store
            .markDeliveredAll(delivered(List.of(first)), new HandOver(runClaim, Set.of("a")))
            .handedOver();
    assertEquals(List.of(a2, a3, a4), ids(run));
    // The relay gives back the start of the run (a send failed) and still holds a4.
    assertTrue(store.release(a2, runClaim.token()));
    assertTrue(store.release(a3, runClaim.token()));

    ClaimedJob head = claimExactlyOne(LEASE);
    assertEquals(a2, head.id(), "the given-back head; a3 waits behind it, a4 is leased");
    List<ClaimedJob> next =
        store
            .markDeliveredAll(
                delivered(List.of(head)), new HandOver(ClaimRequest.of(10, LEASE), Set.of("a")))
            .handedOver();
    assertEquals(List.of(a3), ids(next), "the run ends before leased a4; a5 stays behind it");
    assertEquals('R', row(a5).state());
    assertEquals(List.of(true), keyWait(a5));
  }

  private static List<DeliveredJob> delivered(List<ClaimedJob> jobs) {
    return jobs.stream()
        .map(m -> new DeliveredJob(m, AttemptRecord.success(Duration.ofMillis(1), "200")))
        .toList();
  }

  /**
   * FIFO per key under load: one producer per key enqueues (each job its own transaction) while
   * three claimers claim and complete in batches; a key's jobs are claimed one at a time and in id
   * order, and none is left waiting. Two more producers share one key: none of its jobs is left
   * waiting either (their relative order is the order the enqueues took their ids).
   */
  @Test
  void concurrentEnqueuersAndClaimersKeepEveryKeyInOrderAndLeaveNoJobWaiting() throws Exception {
    int keys = 4;
    int perKey = jobsPerProducer();
    Map<String, List<Long>> claimedOrder = new ConcurrentHashMap<>();
    Queue<String> violations = new ConcurrentLinkedQueue<>();
    ExecutorService pool = Executors.newFixedThreadPool(keys + 2 + 3);
    try {
      List<Future<?>> producers = new ArrayList<>();
      for (int k = 0; k < keys; k++) {
        String key = "k" + k;
        producers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < perKey; i++) {
                    enqueue(message("conc-" + key + "-" + i).orderingKey(key).build());
                  }
                  return null;
                }));
      }
      for (int p = 0; p < 2; p++) {
        int producer = p;
        producers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < perKey; i++) {
                    enqueue(
                        message("conc-shared-" + producer + "-" + i).orderingKey("shared").build());
                  }
                  return null;
                }));
      }
      int total = (keys + 2) * perKey;
      AtomicInteger sent = new AtomicInteger();
      List<Future<?>> claimers = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        claimers.add(
            pool.submit(
                () -> {
                  JdbcOutboxStore relay = JdbcOutboxStore.create(dataSource(), tables());
                  long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                  while (sent.get() < total && System.nanoTime() < deadline) {
                    List<ClaimedJob> batch = relay.claimBatch(ClaimRequest.of(8, LEASE));
                    for (ClaimedJob m : batch) {
                      List<Long> order =
                          claimedOrder.computeIfAbsent(
                              m.orderingKey(),
                              x -> Collections.synchronizedList(new ArrayList<>()));
                      Long previous = order.isEmpty() ? null : order.get(order.size() - 1);
                      if (previous != null
                          && !"shared".equals(m.orderingKey())
                          && row(previous).state() != 'S') {
                        violations.add(
                            m.id()
                                + " claimed while "
                                + previous
                                + " of key "
                                + m.orderingKey()
                                + " was unfinished");
                      }
                      order.add(m.id());
                    }
                    sent.addAndGet(
                        relay
                            .markDeliveredAll(
                                batch.stream()
                                    .map(
                                        m ->
                                            new DeliveredJob(
                                                m,
                                                AttemptRecord.success(Duration.ofMillis(1), "200")))
                                    .toList())
                            .size());
                  }
                  return null;
                }));
      }
      for (Future<?> f : producers) {
        f.get(60, TimeUnit.SECONDS);
      }
      for (Future<?> f : claimers) {
        f.get(90, TimeUnit.SECONDS);
      }
      assertEquals(List.of(), List.copyOf(violations));
      assertEquals(
          counts(0, 0, total, 0, 0), admin.countByState(), "every job sent, none left waiting");
      for (int k = 0; k < keys; k++) {
        List<Long> order = claimedOrder.get("k" + k);
        assertEquals(order.stream().sorted().toList(), order, "key k" + k + " in id order");
        assertEquals(perKey, order.size());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  // ---- claim ---------------------------------------------------------------------------------

  @Test
  void claimTakesAtMostTheLimitInIdOrderAndLeasesThem() {
    List<Long> ready = TestDatabases.insertReady(ds, 10);
    ClaimRequest request = ClaimRequest.of(3, LEASE);

    Instant before = admin.databaseNow();
    List<ClaimedJob> claimed = store.claimBatch(request);
    Instant after = admin.databaseNow();

    assertEquals(ready.subList(0, 3), ids(claimed), "the three lowest ids, ascending");
    for (ClaimedJob c : claimed) {
      StoredJob m = row(c.id());
      assertAll(
          "message " + c.id(),
          () -> assertEquals('W', m.state()),
          () -> assertEquals(request.token(), m.claimToken()),
          () -> assertEquals(request.token(), c.claimToken()),
          () -> assertBetween(before.plus(LEASE), after.plus(LEASE), m.leaseUntil(), "lease_until"),
          () -> assertEquals(m.leaseUntil(), c.leaseUntil()),
          () -> assertBetween(before, after, m.claimedAt(), "claimed_at"),
          () -> assertEquals(0, m.attempts()),
          () -> assertEquals(0, c.attempts()));
    }
    assertEquals(counts(7, 3, 0, 0, 0), admin.countByState());
    for (long id : ready.subList(3, 10)) {
      StoredJob m = row(id);
      assertEquals('R', m.state());
      assertNull(m.claimToken());
      assertNull(m.claimedAt());
    }
  }

  @Test
  void claimReturnsExactlyTheRowsItChanged() {
    List<Long> ready = TestDatabases.insertReady(ds, 5);
    ClaimRequest first = ClaimRequest.of(3, LEASE);
    ClaimRequest second = ClaimRequest.of(10, LEASE);

    List<ClaimedJob> a = store.claimBatch(first);
    List<ClaimedJob> b = store.claimBatch(second);

    assertEquals(ready.subList(0, 3), ids(a));
    assertEquals(ready.subList(3, 5), ids(b), "only the two rows still ready");
    assertTrue(b.stream().allMatch(c -> c.claimToken().equals(second.token())));
    for (ClaimedJob c : a) {
      assertEquals(
          first.token(), row(c.id()).claimToken(), "a later claim must not re-stamp a W row");
    }
    assertEquals(List.of(), claim(10, LEASE));
  }

  @Test
  void claimOnAnEmptyTableReturnsNothing() {
    assertEquals(List.of(), claim(10, LEASE));
    assertEquals(counts(0, 0, 0, 0, 0), admin.countByState());
  }

  @Test
  void claimSkipsJobsThatAreNotDueOrNotReady() {
    List<Long> ready = TestDatabases.insertReady(ds, 3);
    long future = enqueue(message("future-1").deliverAfter(Duration.ofMinutes(5)).build());
    long sent = TestDatabases.insertReady(ds, 1).get(0);
    long dead = TestDatabases.insertReady(ds, 1).get(0);
    TestDatabases.update(ds, "UPDATE outbox_message SET state = 'S' WHERE id = ?", sent);
    TestDatabases.update(ds, "UPDATE outbox_message SET state = 'D' WHERE id = ?", dead);

    assertEquals(ready, ids(claim(10, LEASE)));
    assertEquals('R', row(future).state());
    assertEquals('S', row(sent).state());
    assertEquals('D', row(dead).state());
  }

  @Test
  void claimSkipsRowsLockedByAnotherTransaction() throws Exception {
    List<Long> ready = TestDatabases.insertReady(ds, 6);
    List<Long> locked = ready.subList(0, 3);

    try (Connection other = ds.getConnection()) {
      other.setAutoCommit(false);
      try (PreparedStatement ps = other.prepareStatement(lockThreeRowsSql())) {
        for (int i = 0; i < 3; i++) {
          ps.setLong(i + 1, locked.get(i));
        }
        try (ResultSet rs = ps.executeQuery()) {
          int n = 0;
          while (rs.next()) {
            n++;
          }
          assertEquals(3, n, "the other transaction holds three row locks");
        }
      }

      List<ClaimedJob> claimed =
          assertTimeoutPreemptively(
              Duration.ofSeconds(10), () -> claim(10, LEASE), "claim must not wait");
      assertEquals(ready.subList(3, 6), ids(claimed), "only the rows nobody else holds");
      for (long id : locked) {
        assertEquals('R', row(id).state());
      }
      other.rollback();
    }
    assertEquals(locked, ids(claim(10, LEASE)), "claimable once the other transaction ends");
  }

  @Test
  void concurrentClaimersClaimEveryJobExactlyOnce() throws Exception {
    int jobs = concurrentClaimJobs();
    int claimers = 8;
    Set<Long> ready = new HashSet<>(TestDatabases.insertReady(ds, jobs));
    Queue<Long> claimedIds = new ConcurrentLinkedQueue<>();
    Map<Long, UUID> tokenById = new ConcurrentHashMap<>();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(claimers);
    try {
      List<Future<Integer>> workers = new ArrayList<>();
      for (int w = 0; w < claimers; w++) {
        // One store per claimer, like separate relays; every call takes its own connection.
        JdbcOutboxStore own = new JdbcOutboxStore(ds, store.dialect());
        Random random = new Random(w);
        workers.add(
            pool.submit(
                () -> {
                  start.await();
                  int batches = 0;
                  while (true) {
                    int limit = 10 + random.nextInt(41);
                    List<ClaimedJob> batch = own.claimBatch(ClaimRequest.of(limit, LEASE));
                    if (batch.isEmpty()) {
                      return batches;
                    }
                    assertTrue(
                        batch.size() <= limit, "claimed " + batch.size() + " with limit " + limit);
                    for (ClaimedJob c : batch) {
                      claimedIds.add(c.id());
                      tokenById.put(c.id(), c.claimToken());
                    }
                    batches++;
                  }
                }));
      }
      start.countDown();
      for (Future<Integer> worker : workers) {
        worker.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    List<Long> all = new ArrayList<>(claimedIds);
    Set<Long> distinct = new HashSet<>(all);
    assertEquals(
        jobs,
        all.size(),
        "claims returned "
            + all.size()
            + " rows for "
            + jobs
            + " jobs"
            + " (duplicates: "
            + (all.size() - distinct.size())
            + ")");
    assertEquals(ready, distinct, "every job claimed, none lost");
    assertEquals(counts(0, jobs, 0, 0, 0), admin.countByState());
    assertEquals(
        tokenById, storedTokens(), "each row carries the token of the claim that returned it");
  }

  /**
   * Several relays on one table: each claims, completes every job it got (a transaction with the
   * attempt row) and reaps, all at once. Every job ends {@code S} exactly once, and no statement
   * fails: where the database picks deadlock victims (SQL Server 1205, MariaDB 1213) the store
   * retries them instead of surfacing the error to the relay.
   */
  @Test
  void relaysClaimingCompletingAndReapingTogetherDeliverEveryJobOnceWithoutErrors()
      throws Exception {
    int jobs = clusterJobs();
    int relays = 6;
    Set<Long> ready = new HashSet<>(TestDatabases.insertReady(ds, jobs));
    Queue<Long> delivered = new ConcurrentLinkedQueue<>();
    Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(relays + 1);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < relays; w++) {
        JdbcOutboxStore own = new JdbcOutboxStore(ds, store.dialect());
        Random random = new Random(w);
        workers.add(
            pool.submit(
                () -> {
                  start.await();
                  while (true) {
                    List<ClaimedJob> batch;
                    try {
                      batch = own.claimBatch(ClaimRequest.of(1 + random.nextInt(20), LEASE));
                    } catch (RuntimeException e) {
                      errors.add(e);
                      return null;
                    }
                    if (batch.isEmpty()) {
                      return null;
                    }
                    for (ClaimedJob c : batch) {
                      try {
                        if (own.markDelivered(
                            c, AttemptRecord.success(Duration.ofMillis(1), "200"))) {
                          delivered.add(c.id());
                        } else {
                          errors.add(
                              new AssertionError(
                                  "lost the claim of " + c.id() + " without any expiry"));
                        }
                      } catch (RuntimeException e) {
                        errors.add(e);
                      }
                    }
                  }
                }));
      }
      JdbcOutboxStore reaper = new JdbcOutboxStore(ds, store.dialect());
      Future<?> reaping =
          pool.submit(
              () -> {
                start.await();
                while (workers.stream().anyMatch(f -> !f.isDone())) {
                  try {
                    assertEquals(
                        new ReapResult(0, 0),
                        reaper.releaseExpiredLeases(5, 100),
                        "no lease expired");
                  } catch (RuntimeException e) {
                    errors.add(e);
                  }
                  TimeSpans.letPass(
                      Duration.ofMillis(5)); // the reaper's own schedule while the workers run
                }
                return null;
              });
      start.countDown();
      for (Future<?> worker : workers) {
        worker.get(180, TimeUnit.SECONDS);
      }
      reaping.get(30, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }

    assertEquals(List.of(), new ArrayList<>(errors), "no relay saw an error");
    List<Long> all = new ArrayList<>(delivered);
    assertEquals(jobs, all.size(), "deliveries for " + jobs + " jobs");
    assertEquals(ready, new HashSet<>(all), "every job delivered once");
    assertEquals(counts(0, 0, jobs, 0, 0), admin.countByState());
    assertEquals(
        jobs,
        TestDatabases.queryLong(
            ds, "SELECT COUNT(*) FROM outbox_attempt WHERE outcome = 'DELIVERED'"),
        "one attempt row per job");
  }

  // ---- token-checked transitions -------------------------------------------------------------

  @Test
  void deliveryCompletesTheJobAndRecordsTheAttempt() {
    long id = TestDatabases.insertReady(ds, 1).get(0);
    ClaimedJob c = claimExactlyOne(LEASE);

    Instant before = admin.databaseNow();
    assertTrue(
        store.markDelivered(
            c,
            AttemptRecord.success(Duration.ofMillis(150), "202 Accepted").madeBy(RELAY_INSTANCE)));
    Instant after = admin.databaseNow();

    StoredJob m = assertSentOnFirstAttempt(id, before, after);
    StoredAttempt a = onlyAttempt(id);
    assertAll(
        () -> assertEquals(id, a.messageId()),
        () -> assertEquals(1, a.attemptNo()),
        () -> assertEquals(AttemptOutcome.DELIVERED, a.outcome()),
        () -> assertEquals(c.claimToken(), a.claimToken()),
        () -> assertEquals("202 Accepted", a.responseSummary()),
        () ->
            assertEquals(RELAY_INSTANCE, a.relayInstance(), "the relay that made the attempt (V7)"),
        () -> assertNull(a.errorClass()),
        () -> assertNull(a.errorMessage()),
        () -> assertBetween(before, after, a.finishedAt(), "finished_at"),
        () ->
            assertEquals(
                Duration.ofMillis(150),
                Duration.between(a.startedAt(), a.finishedAt()),
                "started_at = finished_at - elapsed"));

    assertFalse(
        store.markDelivered(c, AttemptRecord.success(Duration.ofMillis(1), "202")),
        "a second completion of the same claim changes nothing");
    assertEquals(m, row(id));
    assertEquals(List.of(AttemptOutcome.DELIVERED, AttemptOutcome.STALE), outcomes(id));
  }

  @Test
  void retryReturnsTheJobToReadyAfterTheBackoff() {
    long id = TestDatabases.insertReady(ds, 1).get(0);
    ClaimedJob c = claimExactlyOne(LEASE);
    AttemptRecord timeout =
        new AttemptRecord(
            Duration.ofMillis(20), "java.net.SocketTimeoutException", "read timed out", null);

    Instant before = admin.databaseNow();
    assertTrue(store.markForRetry(c, Duration.ofSeconds(10), timeout));
    Instant after = admin.databaseNow();

    StoredJob m = row(id);
    assertAll(
        () -> assertEquals('R', m.state()),
        () ->
            assertBetween(
                before.plusSeconds(10), after.plusSeconds(10), m.deliverAfter(), "deliver_after"),
        () -> assertEquals(1, m.attempts()),
        () -> assertEquals("java.net.SocketTimeoutException: read timed out", m.lastError()),
        () -> assertNull(m.claimToken()),
        () -> assertNull(m.leaseUntil()),
        () -> assertNull(m.sentAt()));
    StoredAttempt a = onlyAttempt(id);
    assertAll(
        () -> assertEquals(AttemptOutcome.RETRY, a.outcome()),
        () -> assertEquals(1, a.attemptNo()),
        () -> assertEquals("java.net.SocketTimeoutException", a.errorClass()),
        () -> assertEquals("read timed out", a.errorMessage()),
        () -> assertNull(a.relayInstance(), "an attempt by an unnamed relay has no instance"));

    assertEquals(List.of(), claim(10, LEASE), "not claimable during the backoff");
    TestDatabases.makeDue(ds, id, 1);
    ClaimedJob again = claimExactlyOne(LEASE);
    assertEquals(1, again.attempts());
    assertEquals(2, again.attemptNo());
    assertNotEquals(c.claimToken(), again.claimToken());
  }

  @Test
  void deadJobKeepsItsDiagnosisAndIsNeverClaimedAgain() {
    long id = TestDatabases.insertReady(ds, 1).get(0);
    ClaimedJob c = claimExactlyOne(LEASE);

    assertTrue(
        store.markDead(
            c, new AttemptRecord(Duration.ofMillis(5), "HTTP 400", "bad request", "400 {}")));

    StoredJob m = row(id);
    assertAll(
        () -> assertEquals('D', m.state()),
        () -> assertEquals("HTTP 400: bad request", m.lastError()),
        () -> assertEquals(1, m.attempts()),
        () -> assertNull(m.claimToken()),
        () -> assertNull(m.leaseUntil()));
    StoredAttempt a = onlyAttempt(id);
    assertEquals(AttemptOutcome.DEAD, a.outcome());
    assertEquals("400 {}", a.responseSummary());
    assertEquals(List.of(), claim(10, LEASE));
  }

  @Test
  void aStaleTokenChangesNothing() {
    long id = TestDatabases.insertReady(ds, 1).get(0);
    ClaimedJob real = claimExactlyOne(LEASE);
    UUID wrong = UUID.randomUUID();
    ClaimedJob stale = withToken(real, wrong);
    StoredJob before = row(id);
    AttemptRecord failure = new AttemptRecord(Duration.ofMillis(3), "IOException", "reset", null);

    assertAll(
        () ->
            assertFalse(
                store.markDelivered(stale, AttemptRecord.success(Duration.ofMillis(3), "200")),
                "markDelivered"),
        () -> assertFalse(store.renewLease(id, wrong, LEASE), "renewLease"),
        () ->
            assertFalse(store.markForRetry(stale, Duration.ofSeconds(1), failure), "markForRetry"),
        () -> assertFalse(store.markDead(stale, failure), "markDead"),
        () -> assertFalse(store.release(id, wrong), "release"));

    assertEquals(before, row(id), "row unchanged");
    List<StoredAttempt> attempts = admin.attempts(id);
    assertEquals(
        List.of(AttemptOutcome.STALE, AttemptOutcome.STALE, AttemptOutcome.STALE),
        outcomes(id),
        "each lost completion is recorded as STALE, never as its outcome");
    StoredAttempt staleDelivery = attempts.get(0);
    assertEquals(wrong, staleDelivery.claimToken());
    assertEquals(1, staleDelivery.attemptNo());
    assertEquals("200", staleDelivery.responseSummary());

    assertTrue(
        store.markDelivered(real, AttemptRecord.success(Duration.ofMillis(3), "200")),
        "the real owner still completes");
    assertEquals('S', row(id).state());
  }

  @Test
  void aBatchedDeliveryCompletesOnlyTheJobsStillHoldingTheirTokens() {
    List<Long> ids = TestDatabases.insertReady(ds, 4);
    List<ClaimedJob> first = claim(2, LEASE);
    List<ClaimedJob> second = claim(2, LEASE);
    assertNotEquals(
        first.get(0).claimToken(), second.get(0).claimToken(), "two claims, two tokens");
    ClaimedJob stale = withToken(second.get(1), UUID.randomUUID());
    StoredJob staleBefore = row(stale.id());
    List<DeliveredJob> batch =
        List.of(
            new DeliveredJob(second.get(0), AttemptRecord.success(Duration.ofMillis(7), "200")),
            new DeliveredJob(
                first.get(1),
                AttemptRecord.success(Duration.ofMillis(5), "201").madeBy(RELAY_INSTANCE)),
            new DeliveredJob(stale, AttemptRecord.success(Duration.ofMillis(3), "202")),
            new DeliveredJob(first.get(0), AttemptRecord.success(Duration.ofMillis(1), "203")));

    Instant before = admin.databaseNow();
    Set<Long> done = store.markDeliveredAll(batch);
    Instant after = admin.databaseNow();

    assertEquals(Set.of(ids.get(0), ids.get(1), ids.get(2)), done);
    for (long id : done) {
      assertSentOnFirstAttempt(id, before, after);
      assertEquals(List.of(AttemptOutcome.DELIVERED), outcomes(id));
    }
    assertEquals("201", onlyAttempt(ids.get(1)).responseSummary());
    assertEquals(
        RELAY_INSTANCE,
        onlyAttempt(ids.get(1)).relayInstance(),
        "the batch records each job's relay");
    assertEquals(staleBefore, row(stale.id()), "the job whose token is stale is untouched");
    StoredAttempt staleAttempt = onlyAttempt(stale.id());
    assertEquals(AttemptOutcome.STALE, staleAttempt.outcome());
    assertEquals(stale.claimToken(), staleAttempt.claimToken());

    assertEquals(
        Set.of(), store.markDeliveredAll(batch), "a repeated batch completes nothing twice");
    assertEquals(counts(0, 1, 3, 0, 0), admin.countByState());
    assertEquals(
        Set.of(ids.get(3)),
        store.markDeliveredAll(
            List.of(
                new DeliveredJob(
                    second.get(1), AttemptRecord.success(Duration.ofMillis(1), "200")))),
        "the real owner still completes");
  }

  @Test
  void aBatchedDeliveryAfterTheLeaseWasReclaimedChangesNothing() {
    TestDatabases.insertReady(ds, 2);
    List<ClaimedJob> old = claim(2, SHORT_LEASE);
    awaitDatabaseClockPast(latestLease(old));
    assertEquals(new ReapResult(2, 0), store.releaseExpiredLeases(10, 10));
    List<ClaimedJob> again = claim(2, LEASE);

    Set<Long> done =
        store.markDeliveredAll(
            old.stream()
                .map(m -> new DeliveredJob(m, AttemptRecord.success(Duration.ofMillis(1), "late")))
                .toList());

    assertEquals(Set.of(), done);
    for (ClaimedJob m : again) {
      assertEquals('W', row(m.id()).state());
      assertEquals(m.claimToken(), row(m.id()).claimToken(), "the new owner keeps its claim");
    }
  }

  @Test
  void aLargeBatchedDeliveryCompletesEveryJob() {
    TestDatabases.insertReady(ds, 150);
    List<DeliveredJob> batch =
        claim(150, LEASE).stream()
            .map(m -> new DeliveredJob(m, AttemptRecord.success(Duration.ofMillis(1), "200")))
            .toList();

    assertEquals(150, store.markDeliveredAll(batch).size());
    assertEquals(counts(0, 0, 150, 0, 0), admin.countByState());
  }

  @Test
  void aTokenOnlyActsOnTheRowsItClaimed() {
    TestDatabases.insertReady(ds, 2);
    ClaimedJob a = claim(1, LEASE).get(0);
    ClaimedJob b = claim(1, LEASE).get(0);
    ClaimedJob bWithTokenOfA = withToken(b, a.claimToken());
    StoredJob before = row(b.id());

    assertFalse(store.release(b.id(), a.claimToken()));
    assertFalse(store.renewLease(b.id(), a.claimToken(), Duration.ofHours(1)));
    assertFalse(
        store.markDelivered(bWithTokenOfA, AttemptRecord.success(Duration.ofMillis(1), "200")));

    assertEquals(before, row(b.id()));
    assertEquals('W', row(a.id()).state(), "the other row is untouched as well");
    assertEquals(a.claimToken(), row(a.id()).claimToken());
  }

  @Test
  void oneHeartbeatRenewsEveryClaimStillOwnedAndReturnsExactlyThose() {
    TestDatabases.insertReady(ds, 4);
    List<ClaimedJob> mine = claim(4, SHORT_LEASE);
    ClaimedJob lost = withToken(mine.get(3), UUID.randomUUID());
    ClaimedJob done = mine.get(2);
    assertTrue(store.markDelivered(done, AttemptRecord.success(Duration.ofMillis(1), "200")));
    Map<Long, UUID> held = new HashMap<>();
    for (ClaimedJob m : List.of(mine.get(0), mine.get(1), done, lost)) {
      held.put(m.id(), m.claimToken());
    }
    StoredJob lostBefore = row(lost.id());

    Instant before = admin.databaseNow();
    assertEquals(
        Set.of(mine.get(0).id(), mine.get(1).id()),
        store.renewLeases(held, Duration.ofMinutes(2)),
        "a finished job and a claim under another token are not renewed");
    Instant after = admin.databaseNow();

    for (ClaimedJob m : mine.subList(0, 2)) {
      assertBetween(
          before.plus(Duration.ofMinutes(2)),
          after.plus(Duration.ofMinutes(2)),
          row(m.id()).leaseUntil(),
          "lease_until of " + m.id());
    }
    assertEquals(lostBefore, row(lost.id()), "the row of a lost claim is untouched");
    assertEquals('S', row(done.id()).state());
    assertEquals(Set.of(), store.renewLeases(Map.of(), LEASE));
  }

  @Test
  void anAttemptRecordsTheRealStartOfItsSendAndCanBeReadBackUnderItsToken() {
    long id = TestDatabases.insertReady(ds, 1).get(0);
    ClaimedJob c = claimExactlyOne(LEASE);
    Instant start =
        admin
            .databaseNow()
            .minus(Duration.ofSeconds(7))
            .truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
    assertEquals(
        Set.of(),
        store.recordedUnder(List.of(c), AttemptOutcome.DELIVERED),
        "nothing recorded yet");
    assertTrue(
        store.markDelivered(
            c, AttemptRecord.success(Duration.ofMillis(150), "200").startedAt(start)));

    assertEquals(
        start,
        onlyAttempt(id).startedAt(),
        "started_at is when the send started, not recording minus elapsed");
    assertEquals(Set.of(id), store.recordedUnder(List.of(c), AttemptOutcome.DELIVERED));
    assertEquals(
        Set.of(),
        store.recordedUnder(List.of(withToken(c, UUID.randomUUID())), AttemptOutcome.DELIVERED),
        "another claim's token did not record it");
    assertEquals(Set.of(), store.recordedUnder(List.of(c), AttemptOutcome.RETRY));
  }

  @Test
  void renewLeaseExtendsTheLeaseFromTheDatabaseClock() {
    long id = TestDatabases.insertReady(ds, 1).get(0);
    ClaimedJob c = claimExactlyOne(SHORT_LEASE);

    Instant before = admin.databaseNow();
    assertTrue(store.renewLease(id, c.claimToken(), Duration.ofMinutes(2)));
    Instant after = admin.databaseNow();

    StoredJob m = row(id);
    assertBetween(
        before.plus(Duration.ofMinutes(2)),
        after.plus(Duration.ofMinutes(2)),
        m.leaseUntil(),
        "lease_until");
    assertEquals('W', m.state());
    assertEquals(c.claimToken(), m.claimToken());
    assertEquals(0, m.attempts());
  }

  @Test
  void releaseReturnsTheJobWithoutCountingAnAttempt() {
    long id = TestDatabases.insertReady(ds, 1).get(0);
    ClaimedJob c = claimExactlyOne(LEASE);

    assertTrue(store.release(id, c.claimToken()));

    StoredJob m = row(id);
    assertAll(
        () -> assertEquals('R', m.state()),
        () -> assertEquals(0, m.attempts()),
        () -> assertNull(m.claimToken()),
        () -> assertNull(m.leaseUntil()),
        () -> assertNull(m.lastError()));
    assertEquals(List.of(), admin.attempts(id), "a release is not an attempt");
    assertFalse(store.release(id, c.claimToken()), "the token died with the release");

    ClaimedJob again = claimExactlyOne(LEASE);
    assertEquals(id, again.id());
    assertEquals(0, again.attempts());
    assertNotEquals(c.claimToken(), again.claimToken());
  }

  // ---- reaper --------------------------------------------------------------------------------

  @Test
  void reaperReturnsExpiredLeasesAndInvalidatesTheirTokens() {
    List<Long> ready = TestDatabases.insertReady(ds, 2);
    List<ClaimedJob> expiring = claim(2, SHORT_LEASE);
    assertEquals(ready, ids(expiring));
    Map<Long, Instant> claimedAt = new HashMap<>();
    for (ClaimedJob c : expiring) {
      claimedAt.put(c.id(), row(c.id()).claimedAt());
    }
    awaitDatabaseClockPast(latestLease(expiring));

    assertEquals(new ReapResult(2, 0), store.releaseExpiredLeases(5, 100));

    for (ClaimedJob c : expiring) {
      StoredJob m = row(c.id());
      assertAll(
          "message " + c.id(),
          () -> assertEquals('R', m.state()),
          () -> assertEquals(1, m.attempts()),
          () -> assertNull(m.claimToken()),
          () -> assertNull(m.leaseUntil()),
          () ->
              assertTrue(
                  m.lastError().contains("lease expired")
                      && m.lastError().contains(c.claimToken().toString()),
                  m.lastError()));
      StoredAttempt a = onlyAttempt(c.id());
      assertAll(
          "attempt of " + c.id(),
          () -> assertEquals(AttemptOutcome.LEASE_EXPIRED, a.outcome()),
          () -> assertEquals(1, a.attemptNo()),
          () -> assertEquals(c.claimToken(), a.claimToken()),
          () -> assertEquals("LeaseExpired", a.errorClass()),
          () -> assertNull(a.relayInstance(), "the reaper did not make the attempt it records"),
          () -> assertEquals(claimedAt.get(c.id()), a.startedAt(), "started_at is the claim time"));
    }

    ClaimedJob old = expiring.get(0);
    AttemptRecord late = AttemptRecord.success(Duration.ofMillis(500), "200");
    assertAll(
        "the old owner has lost the job",
        () -> assertFalse(store.markDelivered(old, late), "markDelivered"),
        () -> assertFalse(store.renewLease(old.id(), old.claimToken(), LEASE), "renewLease"),
        () -> assertFalse(store.markForRetry(old, Duration.ZERO, late), "markForRetry"),
        () -> assertFalse(store.markDead(old, late), "markDead"),
        () -> assertFalse(store.release(old.id(), old.claimToken()), "release"));
    assertEquals('R', row(old.id()).state());

    List<ClaimedJob> reclaimed = claim(10, LEASE);
    assertEquals(ready, ids(reclaimed));
    for (ClaimedJob c : reclaimed) {
      assertTrue(
          expiring.stream().noneMatch(e -> e.claimToken().equals(c.claimToken())), "a new token");
      assertEquals(1, c.attempts());
      assertEquals(2, c.attemptNo());
    }
    assertEquals(new ReapResult(0, 0), store.releaseExpiredLeases(5, 100), "nothing left to reap");
  }

  @Test
  void reaperKillsAJobWhoseLastAttemptExpired() {
    long id = TestDatabases.insertReady(ds, 1).get(0);
    ClaimedJob c = claimExactlyOne(SHORT_LEASE);
    awaitDatabaseClockPast(c.leaseUntil());

    assertEquals(new ReapResult(0, 1), store.releaseExpiredLeases(1, 100));

    StoredJob m = row(id);
    assertEquals('D', m.state());
    assertEquals(1, m.attempts());
    assertNull(m.claimToken());
    assertTrue(m.lastError().contains("max attempts (1) reached"), m.lastError());
    assertEquals(List.of(AttemptOutcome.LEASE_EXPIRED), outcomes(id));
    assertEquals(List.of(), claim(10, LEASE));
  }

  @Test
  void reaperLeavesLiveAndRenewedLeasesAlone() {
    List<Long> ready = TestDatabases.insertReady(ds, 3);
    ClaimedJob expiring = claim(1, SHORT_LEASE).get(0);
    ClaimedJob renewed = claim(1, SHORT_LEASE).get(0);
    ClaimedJob live = claim(1, LEASE).get(0);
    assertEquals(ready, List.of(expiring.id(), renewed.id(), live.id()));
    assertTrue(store.renewLease(renewed.id(), renewed.claimToken(), LEASE));
    awaitDatabaseClockPast(latestLease(List.of(expiring, renewed)));

    assertEquals(new ReapResult(1, 0), store.releaseExpiredLeases(5, 100));

    assertEquals('R', row(expiring.id()).state());
    for (ClaimedJob c : List.of(renewed, live)) {
      StoredJob m = row(c.id());
      assertEquals('W', m.state(), "message " + c.id());
      assertEquals(c.claimToken(), m.claimToken());
      assertEquals(0, m.attempts());
      assertEquals(List.of(), admin.attempts(c.id()));
    }
    assertTrue(store.markDelivered(renewed, AttemptRecord.success(Duration.ofMillis(1), "200")));
  }

  @Test
  void reaperHonoursItsLimit() {
    TestDatabases.insertReady(ds, 3);
    List<ClaimedJob> expiring = claim(3, SHORT_LEASE);
    awaitDatabaseClockPast(latestLease(expiring));

    assertEquals(new ReapResult(2, 0), store.releaseExpiredLeases(5, 2));
    assertEquals(new ReapResult(1, 0), store.releaseExpiredLeases(5, 2));
    assertEquals(counts(3, 0, 0, 0, 0), admin.countByState());
  }

  // ---- retention -----------------------------------------------------------------------------

  /**
   * Jobs in every state, finished ones older and younger than the keep age (made old with the
   * database clock): retention deletes exactly the old S and C jobs, with their attempts and
   * out-of-band bodies, a batch at most per call, and leaves everything else alone.
   */
  @Test
  void retentionDeletesOnlyOldSentAndConfirmedJobsInBatches() {
    List<Long> ids = TestDatabases.insertReady(ds, 15);
    List<ClaimedJob> claimed = claim(15, LEASE);
    assertEquals(ids, ids(claimed));
    for (ClaimedJob c : claimed.subList(0, 13)) {
      assertTrue(store.markDelivered(c, AttemptRecord.success(Duration.ofMillis(1), "200")));
    }
    assertTrue(
        store.markDead(
            claimed.get(13), new AttemptRecord(Duration.ofMillis(1), "HTTP 422", "no", null)));
    long working = ids.get(14);
    long fresh = TestDatabases.insertReady(ds, 1).get(0);

    List<Long> oldSent = ids.subList(0, 7);
    List<Long> oldConfirmed = ids.subList(7, 10);
    long youngSent = ids.get(10);
    long recentlyConfirmed = ids.get(11);
    long redriven = ids.get(12);
    long dead = ids.get(13);
    String twoHoursAgo = TestDatabases.secondsAgo(ds, 7200);
    String threeHoursAgo = TestDatabases.secondsAgo(ds, 10800);
    for (long id : oldSent) {
      TestDatabases.update(
          ds, "UPDATE outbox_message SET sent_at = " + twoHoursAgo + " WHERE id = ?", id);
    }
    // Confirmed two hours ago, one of them without confirmed_at (its sent_at counts).
    for (long id : oldConfirmed) {
      TestDatabases.update(
          ds,
          "UPDATE outbox_message SET state = 'C', sent_at = "
              + threeHoursAgo
              + ", confirmed_at = "
              + (id == oldConfirmed.get(2) ? "NULL" : twoHoursAgo)
              + " WHERE id = ?",
          id);
    }
    // Sent long ago but confirmed just now: kept, confirmed_at counts for C.
    TestDatabases.update(
        ds,
        "UPDATE outbox_message SET state = 'C', sent_at = "
            + threeHoursAgo
            + ", confirmed_at = "
            + TestDatabases.secondsAgo(ds, 10)
            + " WHERE id = ?",
        recentlyConfirmed);
    // Unfinished jobs with an old sent_at (re-driven, dead, in flight again): never deleted.
    TestDatabases.update(
        ds,
        "UPDATE outbox_message SET state = 'R', sent_at = " + twoHoursAgo + " WHERE id = ?",
        redriven);
    for (long id : List.of(dead, working, fresh)) {
      TestDatabases.update(
          ds, "UPDATE outbox_message SET sent_at = " + twoHoursAgo + " WHERE id = ?", id);
    }
    for (long id : List.of(oldSent.get(0), oldConfirmed.get(0), youngSent)) {
      TestDatabases.update(
          ds,
          "INSERT INTO outbox_payload (message_id, body, size_bytes, sha256)"
              + " VALUES (?, 'body', 4, ?)",
          id,
          "0".repeat(64));
    }
    List<Long> old = new ArrayList<>(oldSent);
    old.addAll(oldConfirmed);
    assertEquals(10, attemptCount(old), "every old job has its delivery attempt");
    assertEquals(counts(2, 1, 8, 4, 1), admin.countByState());

    Duration keep = Duration.ofHours(1);
    assertEquals(4, store.deleteFinishedBefore(keep, 4));
    assertEquals(4, store.deleteFinishedBefore(keep, 4));
    assertEquals(2, store.deleteFinishedBefore(keep, 4), "the rest, fewer than a batch");
    assertEquals(0, store.deleteFinishedBefore(keep, 4), "nothing old is left");

    Set<Long> left = new HashSet<>(TestDatabases.queryLongs(ds, "SELECT id FROM outbox_message"));
    assertEquals(Set.of(youngSent, recentlyConfirmed, redriven, dead, working, fresh), left);
    assertEquals(counts(2, 1, 1, 1, 1), admin.countByState());
    assertEquals(0, attemptCount(old), "attempts go with their job");
    assertEquals(
        List.of(youngSent),
        TestDatabases.queryLongs(ds, "SELECT message_id FROM outbox_payload"),
        "out-of-band bodies go with their job");
    assertEquals(1, admin.attempts(youngSent).size(), "a kept job keeps its attempts");
    assertEquals('W', row(working).state());
  }

  /**
   * Since V9 no foreign key ties an attempt to its job (its check per row cost a third of the
   * completion's rate; retention deletes the attempts itself, above): a row naming no job is
   * accepted, on every database and under configured names.
   */
  @Test
  void anAttemptRowNeedsNoJobRowSinceV9() {
    long noJob = TestDatabases.insertReady(ds, 1).get(0) + 1_000_000;
    assertEquals(
        1,
        TestDatabases.update(
            ds,
            "INSERT INTO outbox_attempt (message_id, attempt_no, started_at, outcome) VALUES (?, 1, "
                + TestDatabases.secondsAgo(ds, 1)
                + ", 'DELIVERED')",
            noJob));
    assertEquals(1, attemptCount(List.of(noJob)));
    assertEquals(
        1, TestDatabases.update(ds, "DELETE FROM outbox_attempt WHERE message_id = ?", noJob));
  }

  private long attemptCount(List<Long> messageIds) {
    long n = 0;
    for (long id : messageIds) {
      n +=
          TestDatabases.queryLong(
              ds, "SELECT COUNT(*) FROM outbox_attempt WHERE message_id = ?", id);
    }
    return n;
  }

  // ---- inspection ----------------------------------------------------------------------------

  @Test
  void countByStateCountsEveryState() {
    assertEquals(counts(0, 0, 0, 0, 0), admin.countByState(), "absent states count 0");
    TestDatabases.insertReady(ds, 6);
    List<ClaimedJob> claimed = claim(3, LEASE);
    store.markDelivered(claimed.get(0), AttemptRecord.success(Duration.ofMillis(1), "200"));
    store.markDead(claimed.get(1), new AttemptRecord(Duration.ofMillis(1), "HTTP 422", "no", null));

    assertEquals(counts(3, 1, 1, 0, 1), admin.countByState());
    TestDatabases.update(
        ds, "UPDATE outbox_message SET state = 'C' WHERE id = ?", claimed.get(0).id());
    assertEquals(counts(3, 1, 0, 1, 1), admin.countByState());
  }

  @Test
  void oldestReadyAgeMeasuresTheOldestDueJob() {
    assertEquals(Optional.empty(), admin.oldestReadyAge(), "no jobs");
    enqueue(message("later-1").deliverAfter(Duration.ofHours(1)).build());
    assertEquals(Optional.empty(), admin.oldestReadyAge(), "a job that is not due yet has no age");

    List<Long> ready = TestDatabases.insertReady(ds, 2);
    TestDatabases.makeDue(ds, ready.get(1), 30);
    Duration age = admin.oldestReadyAge().orElseThrow();
    assertTrue(
        age.compareTo(Duration.ofSeconds(30)) >= 0 && age.compareTo(Duration.ofSeconds(35)) < 0,
        "age " + age);

    claim(2, LEASE);
    assertEquals(Optional.empty(), admin.oldestReadyAge(), "claimed jobs are not waiting");
  }

  @Test
  void oldestReadyAgeOfARetriedJobCountsFromItsFirstAttempt() {
    TestDatabases.insertReady(ds, 1);
    ClaimedJob c = claim(1, LEASE).get(0);
    // The first attempt started 20 s ago (by its recorded elapsed time) and failed: backoff 1 h.
    assertTrue(
        store.markForRetry(
            c,
            Duration.ofHours(1),
            new AttemptRecord(Duration.ofSeconds(20), "HTTP 503", "unavailable", null)));
    Duration age =
        admin
            .oldestReadyAge()
            .orElseThrow(
                () -> new AssertionError("a job in backoff is still waiting to be delivered"));
    assertTrue(
        age.compareTo(Duration.ofSeconds(20)) >= 0 && age.compareTo(Duration.ofSeconds(25)) < 0,
        "age counts from the first attempt, not from the postponed deliver_after: " + age);

    assertEquals(List.of(), claim(1, LEASE), "the job is in backoff, not due");
    TestDatabases.update(
        ds,
        "UPDATE outbox_message SET deliver_after = "
            + TestDatabases.minusSeconds(ds, "deliver_after", 7200)
            + " WHERE id = ?",
        c.id());
    assertEquals(c.id(), claim(1, LEASE).get(0).id(), "due again and claimed");
    assertTrue(
        admin.oldestReadyAge().orElseThrow().compareTo(Duration.ofSeconds(20)) >= 0,
        "a retried job in flight again keeps its age");
  }

  @Test
  void backlogByDestinationCountsDueJobsAndAgesEachDestinationInOneStatement() {
    assertEquals(Map.of(), admin.backlogByDestination(), "no jobs");
    enqueue(message("later-billing").deliverAfter(Duration.ofHours(1)).build());
    assertEquals(Map.of(), admin.backlogByDestination(), "a job that is not due yet is no backlog");

    List<Long> billing = TestDatabases.insertReady(ds, 3);
    TestDatabases.makeDue(ds, billing.get(0), 40);
    long orders = enqueue(message("due-orders").destination(KAFKA_ORDERS).build());
    TestDatabases.makeDue(ds, orders, 10);

    Map<String, DestinationBacklog> backlog = admin.backlogByDestination();
    assertEquals(
        List.of(HTTP_BILLING, KAFKA_ORDERS),
        List.copyOf(backlog.keySet()),
        "destinations in name order");
    assertEquals(
        3, backlog.get(HTTP_BILLING).ready(), "the three due jobs, not the one due in an hour");
    assertBetweenSeconds(40, backlog.get(HTTP_BILLING).oldestReadyAge(), "billing's oldest");
    assertEquals(1, backlog.get(KAFKA_ORDERS).ready());
    assertBetweenSeconds(10, backlog.get(KAFKA_ORDERS).oldestReadyAge(), "orders' oldest");
    assertEquals(
        admin.oldestReadyAge().orElseThrow().toMillis(),
        backlog.get(HTTP_BILLING).oldestReadyAge().toMillis(),
        1000,
        "the per-source age is the oldest destination's (two statements, a moment apart)");

    // Billing's jobs claimed (lowest ids first): in flight on a first attempt, they no longer wait.
    List<ClaimedJob> claimed = claim(3, LEASE);
    assertEquals(
        Set.copyOf(billing),
        claimed.stream().map(ClaimedJob::id).collect(java.util.stream.Collectors.toSet()));
    backlog = admin.backlogByDestination();
    assertEquals(
        List.of(KAFKA_ORDERS), List.copyOf(backlog.keySet()), "billing drops out: " + backlog);
    assertEquals(1, backlog.get(KAFKA_ORDERS).ready());

    // A billing job retried (in backoff) keeps billing's age from its first attempt, with 0 due.
    ClaimedJob retried = claimed.get(0);
    assertTrue(
        store.markForRetry(
            retried,
            Duration.ofHours(1),
            new AttemptRecord(Duration.ofSeconds(20), "HTTP 503", "unavailable", null)));
    backlog = admin.backlogByDestination();
    assertEquals(0, backlog.get(HTTP_BILLING).ready(), "in backoff, not due: " + backlog);
    assertBetweenSeconds(20, backlog.get(HTTP_BILLING).oldestReadyAge(), "billing's retried job");
  }

  private static void assertBetweenSeconds(int expected, Duration age, String what) {
    assertTrue(
        age.compareTo(Duration.ofSeconds(expected)) >= 0
            && age.compareTo(Duration.ofSeconds(expected + 5)) < 0,
        what + ": " + age);
  }

  @Test
  void databaseNowFollowsTheRealClock() {
    Instant first = admin.databaseNow();
    Instant second = admin.databaseNow();
    assertBetween(
        Instant.now().minusSeconds(5), Instant.now().plusSeconds(5), first, "database now");
    assertFalse(second.isBefore(first), first + " then " + second);
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** Each job's {@code key_wait}, in the order given. */
  protected List<Boolean> keyWait(long... ids) {
    List<Boolean> waits = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT key_wait FROM outbox_message WHERE id = ?")) {
      for (long id : ids) {
        ps.setLong(1, id);
        try (ResultSet rs = ps.executeQuery()) {
          assertTrue(rs.next(), "no message " + id);
          waits.add(rs.getBoolean(1));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return waits;
  }

  protected static OutboxMessage.Builder message(String operationId) {
    return OutboxMessage.builder().operationId(operationId).destination(HTTP_BILLING).payload("{}");
  }

  /** Enqueues in a committed transaction of its own; returns the job id. */
  protected long enqueue(OutboxMessage message) {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      long id = outbox.enqueue(c, message).messageId();
      c.commit();
      return id;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  protected StoredJob row(long id) {
    return admin.findJob(id).orElseThrow(() -> new AssertionError("no message " + id));
  }

  protected List<ClaimedJob> claim(int limit, Duration lease) {
    return store.claimBatch(ClaimRequest.of(limit, lease));
  }

  /**
   * Job {@code id} is sent ({@code S}) by its first attempt, completed between {@code before} and
   * {@code after}; its row.
   */
  private StoredJob assertSentOnFirstAttempt(long id, Instant before, Instant after) {
    StoredJob m = row(id);
    assertAll(
        () -> assertEquals('S', m.state()),
        () -> assertBetween(before, after, m.sentAt(), "sent_at"),
        () -> assertEquals(1, m.attempts()),
        () -> assertNull(m.claimToken()),
        () -> assertNull(m.leaseUntil()),
        () -> assertNull(m.lastError()),
        () -> assertNotNull(m.claimedAt()));
    return m;
  }

  protected ClaimedJob claimExactlyOne(Duration lease) {
    List<ClaimedJob> claimed = claim(10, lease);
    assertEquals(1, claimed.size(), "claimed " + ids(claimed));
    return claimed.get(0);
  }

  protected static List<Long> ids(List<ClaimedJob> claimed) {
    return claimed.stream().map(ClaimedJob::id).toList();
  }

  private StoredAttempt onlyAttempt(long id) {
    List<StoredAttempt> attempts = admin.attempts(id);
    assertEquals(1, attempts.size(), "attempts of " + id + ": " + attempts);
    return attempts.get(0);
  }

  private List<AttemptOutcome> outcomes(long id) {
    return admin.attempts(id).stream().map(StoredAttempt::outcome).toList();
  }

  private static ClaimedJob withToken(ClaimedJob m, UUID token) {
    return new ClaimedJob(
        m.id(),
        m.operationId(),
        m.destination(),
        m.orderingKey(),
        m.payload(),
        m.contentType(),
        m.headers(),
        m.attempts(),
        token,
        m.createdAt(),
        m.leaseUntil());
  }

  protected static Map<Character, Long> counts(long r, long w, long s, long c, long d) {
    return Map.of('R', r, 'W', w, 'S', s, 'C', c, 'D', d);
  }

  private static Instant latestLease(List<ClaimedJob> claimed) {
    return Collections.max(claimed.stream().map(ClaimedJob::leaseUntil).toList());
  }

  /** Waits (at most 5 s) until the database clock is past {@code instant}: leases expire by it. */
  private void awaitDatabaseClockPast(Instant instant) {
    await("database clock past " + instant)
        .atMost(Duration.ofSeconds(5))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> admin.databaseNow().isAfter(instant));
  }

  private Map<Long, UUID> storedTokens() throws SQLException {
    Map<Long, UUID> tokens = new HashMap<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT id, claim_token FROM outbox_message");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        tokens.put(rs.getLong(1), store.dialect().binding().readUuid(rs, 2));
      }
    }
    return tokens;
  }

  private static Map<String, String> headers(String json) throws Exception {
    return JSON.readValue(json, new TypeReference<Map<String, String>>() {});
  }

  protected static void assertBetween(Instant from, Instant to, Instant actual, String what) {
    assertNotNull(actual, what);
    assertTrue(
        !actual.isBefore(from.minus(CLOCK_SLACK)) && !actual.isAfter(to.plus(CLOCK_SLACK)),
        what + " " + actual + " not within [" + from + ", " + to + "]");
  }
}
