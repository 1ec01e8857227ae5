package dev.outboxrelay.outbox;

import static dev.outboxrelay.outbox.testing.TestDatabases.HTTP_BILLING;
import static dev.outboxrelay.outbox.testing.TestDatabases.KAFKA_ORDERS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.ClaimRequest;
import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.PayloadDigest;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.store.StoredPayload;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Payloads over the inline threshold are stored out of band in {@code outbox_payload}, in the
 * caller's transaction, with a reference in the job's row (docs/library.md "Large payloads"). Run
 * per database by a nested class of each database's suite ({@code *SuiteIT}).
 */
public abstract class LargePayloadContractTest {
  /** A business table written in the same transaction as the job. */
  private static final String DOCUMENTS = "outbox_it_document";

  /** Non-ASCII on purpose: 2-, 3- and 4-byte UTF-8 sequences must come back byte for byte. */
  private static final String TEXT = "Zoë ✓ 東京 😀 naïve façade – ";

  protected DataSource ds;
  private JdbcOutboxStore store;
  private JdbcOutboxAdminStore admin;
  private Outbox outbox;

  protected abstract DataSource dataSource();

  /** Creates the business table {@code name} unless it exists. */
  protected String createDocumentsTableSql(String name) {
    return "CREATE TABLE IF NOT EXISTS "
        + name
        + " (id BIGINT PRIMARY KEY, note VARCHAR(100) NOT NULL)";
  }

  @BeforeEach
  void setUp() {
    ds = dataSource();
    TestDatabases.execute(ds, createDocumentsTableSql(DOCUMENTS));
    resetAll();
    store = JdbcOutboxStore.create(ds);
    admin = new JdbcOutboxAdminStore(ds, store.dialect());
    outbox = new Outbox(OutboxConfig.builder().destinations(HTTP_BILLING, KAFKA_ORDERS).build());
  }

  @AfterEach
  void resetAll() {
    TestDatabases.execute(ds, "DELETE FROM " + DOCUMENTS);
    TestDatabases.reset(ds);
  }

  @Test
  void aLargeBodyIsStoredOutOfBandAndReadsBackByteExact() throws Exception {
    String body = json(300_000);
    long id;
    try (Connection c = transaction()) {
      insertDocument(c, 1);
      EnqueueResult r = outbox.enqueue(c, job("doc-1/billing", body));
      assertTrue(r.created());
      id = r.messageId();
      c.commit();
    }
    byte[] expected = body.getBytes(StandardCharsets.UTF_8);
    PayloadDigest digest = PayloadDigest.of(body);

    StoredJob m = admin.findJob(id).orElseThrow();
    assertTrue(m.payloadByReference());
    assertEquals(digest.reference(), m.payload(), "the job row holds only the reference");
    assertTrue(m.payload().length() < 200, m.payload());
    assertEquals(1, payloadRows());
    assertEquals(
        expected.length,
        TestDatabases.queryLong(
            ds, "SELECT size_bytes FROM outbox_payload WHERE message_id = ?", id));

    StoredPayload p = store.findPayload(id).orElseThrow();
    assertEquals(id, p.messageId());
    assertArrayEquals(expected, p.body().getBytes(StandardCharsets.UTF_8));
    assertEquals(expected.length, p.sizeBytes());
    assertEquals(PayloadDigest.sha256Hex(expected), p.sha256().strip());
    assertNull(p.mismatch());
  }

  @Test
  void theClaimCarriesOnlyTheReferenceNotTheBody() throws Exception {
    String body = json(200_000);
    try (Connection c = transaction()) {
      outbox.enqueue(c, job("doc-2/billing", body));
      outbox.enqueue(c, job("doc-2/kafka", "{\"small\":true}", KAFKA_ORDERS));
      c.commit();
    }
    List<ClaimedJob> claimed = store.claimBatch(ClaimRequest.of(10, Duration.ofSeconds(30)));
    assertEquals(2, claimed.size());
    ClaimedJob large = claimed.get(0);
    assertTrue(large.payloadByReference());
    assertEquals(PayloadDigest.of(body).reference(), large.payload());
    ClaimedJob small = claimed.get(1);
    assertFalse(small.payloadByReference());
    assertEquals("{\"small\":true}", small.payload());

    ClaimedJob resolved = large.withPayload(store.findPayload(large.id()).orElseThrow().body());
    assertEquals(body, resolved.payload());
    assertFalse(resolved.payloadByReference());
    assertEquals(large.claimToken(), resolved.claimToken(), "the same claim, with its body");
  }

  @Test
  void justAtTheThresholdIsInlineAndOneByteOverIsByReferenceCountingUtf8Bytes() throws Exception {
    Outbox small =
        new Outbox(
            OutboxConfig.builder().destinations(HTTP_BILLING).inlinePayloadBytes(1000).build());
    String atThreshold = "é".repeat(500); // 500 characters, 1000 bytes
    String overThreshold = "é".repeat(500) + "x"; // 501 characters, 1001 bytes
    try (Connection c = transaction()) {
      small.enqueue(c, text("doc-3/at", atThreshold));
      small.enqueue(c, text("doc-3/over", overThreshold));
      c.commit();
    }
    StoredJob at = admin.findByOperationId("doc-3/at").orElseThrow();
    assertFalse(at.payloadByReference());
    assertEquals(atThreshold, at.payload());
    StoredJob over = admin.findByOperationId("doc-3/over").orElseThrow();
    assertTrue(over.payloadByReference());
    assertEquals(overThreshold, store.findPayload(over.id()).orElseThrow().body());
    assertEquals(1, payloadRows());
  }

  @Test
  void rollbackLeavesNeitherTheJobNorItsBodyNorTheBusinessRow() throws Exception {
    try (Connection c = transaction()) {
      insertDocument(c, 4);
      outbox.enqueue(c, job("doc-4/billing", json(100_000)));
      c.rollback();
    }
    assertEquals(0, TestDatabases.countMessages(ds));
    assertEquals(0, payloadRows());
    assertEquals(0, documents());
  }

  @Test
  void reEnqueueOfTheSameLargeBodyIsANoOpInTheSameTransactionAndAfterCommit() throws Exception {
    String body = json(150_000);
    long id;
    try (Connection c = transaction()) {
      id = outbox.enqueue(c, job("doc-5/billing", body)).messageId();
      // A copy, not the same String instance: equality is by content.
      assertEquals(
          new EnqueueResult(id, false), outbox.enqueue(c, job("doc-5/billing", new String(body))));
      insertDocument(c, 5);
      c.commit();
    }
    try (Connection c = transaction()) {
      assertEquals(new EnqueueResult(id, false), outbox.enqueue(c, job("doc-5/billing", body)));
      c.commit();
    }
    assertEquals(1, TestDatabases.countMessages(ds));
    assertEquals(1, payloadRows());
    assertEquals(body, store.findPayload(id).orElseThrow().body());
  }

  @Test
  void reEnqueueWithADifferentLargeBodyIsADuplicateAndTheTransactionGoesOn() throws Exception {
    String body = json(150_000);
    // Same size, one character different at the very end: only the real body tells them apart.
    String changed = body.substring(0, body.length() - 2) + "1}";
    assertEquals(body.length(), changed.length());
    assertFalse(body.equals(changed));
    try (Connection c = transaction()) {
      long id = outbox.enqueue(c, job("doc-6/billing", body)).messageId();
      DuplicateOperationException e =
          assertThrows(
              DuplicateOperationException.class,
              () -> outbox.enqueue(c, job("doc-6/billing", changed)));
      assertEquals("operation_id", e.field());
      assertEquals(id, e.existingMessageId());
      assertTrue(e.getMessage().contains("different payload"), e.getMessage());
      DuplicateOperationException small =
          assertThrows(
              DuplicateOperationException.class,
              () -> outbox.enqueue(c, job("doc-6/billing", "{\"small\":1}")));
      assertTrue(small.getMessage().contains("payload"), small.getMessage());

      insertDocument(c, 6);
      c.commit();
    }
    assertEquals(1, TestDatabases.countMessages(ds));
    assertEquals(1, payloadRows());
    StoredJob m = admin.findByOperationId("doc-6/billing").orElseThrow();
    assertEquals(body, store.findPayload(m.id()).orElseThrow().body(), "the first body stands");
    assertEquals(1, documents());
  }

  @Test
  void theSameBodyIsTheSameJobEvenWhenTheThresholdChangedBetweenEnqueues() throws Exception {
    String body = json(5_000);
    Outbox inline = new Outbox(OutboxConfig.builder().destinations(HTTP_BILLING).build());
    Outbox byReference =
        new Outbox(
            OutboxConfig.builder().destinations(HTTP_BILLING).inlinePayloadBytes(100).build());
    long inlineId;
    long byReferenceId;
    try (Connection c = transaction()) {
      inlineId = inline.enqueue(c, job("doc-7/a", body)).messageId();
      byReferenceId = byReference.enqueue(c, job("doc-7/b", body)).messageId();
      c.commit();
    }
    try (Connection c = transaction()) {
      assertEquals(
          new EnqueueResult(inlineId, false), byReference.enqueue(c, job("doc-7/a", body)));
      assertEquals(
          new EnqueueResult(byReferenceId, false), inline.enqueue(c, job("doc-7/b", body)));
      assertThrows(
          DuplicateOperationException.class,
          () -> byReference.enqueue(c, job("doc-7/a", json(5_001))));
      assertThrows(
          DuplicateOperationException.class, () -> inline.enqueue(c, job("doc-7/b", json(5_001))));
      c.commit();
    }
    assertEquals(2, TestDatabases.countMessages(ds));
    assertEquals(1, payloadRows());
  }

  @Test
  void aUserPayloadThatLooksLikeAReferenceIsKeptAsItIs() throws Exception {
    String lookalike = PayloadDigest.of(json(100_000)).reference();
    try (Connection c = transaction()) {
      outbox.enqueue(c, text("doc-8/billing", lookalike));
      c.commit();
    }
    StoredJob m = admin.findByOperationId("doc-8/billing").orElseThrow();
    assertFalse(m.payloadByReference(), "only payload_by_ref marks a reference, never the text");
    assertEquals(lookalike, m.payload());
    ClaimedJob claimed = store.claimBatch(ClaimRequest.of(1, Duration.ofSeconds(30))).get(0);
    assertFalse(claimed.payloadByReference());
    assertEquals(lookalike, claimed.payload());
    assertEquals(0, payloadRows());
  }

  @Test
  void overTheHardLimitIsRejectedNamingTheFieldSizeLimitAndThePattern() throws Exception {
    String body = "x".repeat(OutboxConfig.DEFAULT_MAX_PAYLOAD_BYTES - 1) + "é"; // limit + 1 bytes
    try (Connection c = transaction()) {
      InvalidMessageException e =
          assertThrows(
              InvalidMessageException.class, () -> outbox.enqueue(c, text("doc-9/billing", body)));
      assertEquals("payload", e.field());
      for (String expected :
          List.of(
              "payload: is 1048577 bytes",
              "the limit is 1048576 bytes",
              "outbox.producer.max-payload-bytes",
              "blob store",
              "Large payloads")) {
        assertTrue(e.getMessage().contains(expected), expected + " in: " + e.getMessage());
      }
      insertDocument(c, 9);
      c.commit();
    }
    assertEquals(0, TestDatabases.countMessages(ds));
    assertEquals(0, payloadRows());
    assertEquals(1, documents());

    String atLimit = "x".repeat(OutboxConfig.DEFAULT_MAX_PAYLOAD_BYTES);
    try (Connection c = transaction()) {
      outbox.enqueue(c, text("doc-9/billing", atLimit));
      c.commit();
    }
    StoredJob m = admin.findByOperationId("doc-9/billing").orElseThrow();
    assertEquals(
        atLimit, store.findPayload(m.id()).orElseThrow().body(), "exactly the limit is accepted");
  }

  @Test
  void fanOutOfALargeBodyStoresOneBodyPerJobAllOrNone() throws Exception {
    String body = json(120_000);
    List<OutboxMessage> jobs =
        OutboxMessage.fanOut(
            "doc-10",
            OutboxMessage.builder().payload(body).build(),
            List.of(HTTP_BILLING, KAFKA_ORDERS));
    try (Connection c = transaction()) {
      outbox.enqueueAll(c, jobs);
      c.rollback();
    }
    assertEquals(0, TestDatabases.countMessages(ds));
    assertEquals(0, payloadRows());
    try (Connection c = transaction()) {
      List<EnqueueResult> results = outbox.enqueueAll(c, jobs);
      assertTrue(results.stream().allMatch(EnqueueResult::created));
      assertEquals(
          results.stream().map(r -> new EnqueueResult(r.messageId(), false)).toList(),
          outbox.enqueueAll(c, jobs),
          "again: the same jobs, no-ops");
      c.commit();
    }
    for (String destination : List.of(HTTP_BILLING, KAFKA_ORDERS)) {
      StoredJob m = admin.findByOperationId("doc-10/" + destination).orElseThrow();
      assertTrue(m.payloadByReference());
      assertEquals(body, store.findPayload(m.id()).orElseThrow().body());
    }
    assertEquals(2, payloadRows());
  }

  @Test
  void deletingAJobDeletesItsBody() throws Exception {
    long id;
    try (Connection c = transaction()) {
      id = outbox.enqueue(c, job("doc-11/billing", json(100_000))).messageId();
      outbox.enqueue(c, job("doc-11/kafka", json(100_000), KAFKA_ORDERS));
      c.commit();
    }
    assertEquals(2, payloadRows());
    // What a retention job does: delete old job rows; their bodies go with them.
    assertEquals(1, TestDatabases.update(ds, "DELETE FROM outbox_message WHERE id = ?", id));
    assertEquals(1, payloadRows());
    assertTrue(store.findPayload(id).isEmpty());
  }

  /**
   * Regression: on an auto-commit connection the job row used to commit before its body, so a relay
   * could claim it in between and end it D with "no outbox_payload row".
   */
  @Test
  void onAnAutoCommitConnectionTheJobAndItsBodyCommitTogether() throws Exception {
    List<String> log = new ArrayList<>();
    try (Connection real = ds.getConnection()) {
      assertTrue(real.getAutoCommit());
      Connection watched =
          (Connection)
              java.lang.reflect.Proxy.newProxyInstance(
                  Connection.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (proxy, method, args) -> {
                    if (method.getName().equals("prepareStatement")) {
                      String sql = ((String) args[0]).toLowerCase(java.util.Locale.ROOT);
                      if (sql.contains("insert into outbox_message")
                          || sql.contains("insert into outbox_payload")) {
                        log.add(
                            (sql.contains("outbox_payload") ? "payload" : "job")
                                + " autocommit="
                                + real.getAutoCommit());
                      }
                    } else if (method.getName().equals("commit")) {
                      log.add("commit");
                    }
                    try {
                      return method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
      long id = outbox.enqueue(watched, job("doc-12/billing", json(100_000))).messageId();
      assertEquals(List.of("job autocommit=false", "payload autocommit=false", "commit"), log);
      assertTrue(real.getAutoCommit(), "the caller's auto-commit mode is restored");
      assertTrue(store.findPayload(id).isPresent());
    }
  }

  // ---- helpers -------------------------------------------------------------------------------

  /**
   * A JSON document of about {@code bytes} UTF-8 bytes of non-ASCII text; different sizes differ.
   */
  static String json(int bytes) {
    int unit = TEXT.getBytes(StandardCharsets.UTF_8).length;
    return "{\"text\":\"" + TEXT.repeat(Math.max(1, bytes / unit)) + "\",\"n\":" + bytes + "}";
  }

  private Connection transaction() throws SQLException {
    Connection c = ds.getConnection();
    c.setAutoCommit(false);
    return c;
  }

  private static OutboxMessage job(String operationId, String payload) {
    return job(operationId, payload, HTTP_BILLING);
  }

  private static OutboxMessage job(String operationId, String payload, String destination) {
    return OutboxMessage.builder()
        .operationId(operationId)
        .destination(destination)
        .payload(payload)
        .build();
  }

  private static OutboxMessage text(String operationId, String payload) {
    return OutboxMessage.builder()
        .operationId(operationId)
        .destination(HTTP_BILLING)
        .contentType("text/plain; charset=utf-8")
        .payload(payload)
        .build();
  }

  private static void insertDocument(Connection c, long id) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO " + DOCUMENTS + " (id, note) VALUES (?, ?)")) {
      ps.setLong(1, id);
      ps.setString(2, "document " + id);
      ps.executeUpdate();
    }
  }

  private long documents() {
    return TestDatabases.queryLong(ds, "SELECT COUNT(*) FROM " + DOCUMENTS);
  }

  private long payloadRows() {
    return TestDatabases.queryLong(ds, "SELECT COUNT(*) FROM outbox_payload");
  }
}
