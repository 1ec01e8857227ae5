package dev.outboxrelay.outbox;

import static dev.outboxrelay.outbox.testing.TestDatabases.HTTP_BILLING;
import static dev.outboxrelay.outbox.testing.TestDatabases.KAFKA_ORDERS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.StoredJob;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Outbox#enqueue} joins the caller's transaction on the caller's connection: the job and the
 * business row commit together or not at all. Run per database by a nested class of each database's
 * suite ({@code *SuiteIT}).
 */
public abstract class OutboxEnqueueContractTest {
  /** A business table written in the same transaction as the job. */
  private static final String ORDERS = "outbox_it_order";

  protected DataSource ds;
  private JdbcOutboxStore store;
  private JdbcOutboxAdminStore admin;
  private Outbox outbox;

  protected abstract DataSource dataSource();

  /** Creates the business table {@code name} unless it exists. SQL Server overrides it. */
  protected String createOrdersTableSql(String name) {
    return "CREATE TABLE IF NOT EXISTS "
        + name
        + " (id BIGINT PRIMARY KEY, note VARCHAR(100) NOT NULL)";
  }

  @BeforeEach
  void setUp() {
    ds = dataSource();
    TestDatabases.execute(ds, createOrdersTableSql(ORDERS));
    resetAll();
    store = JdbcOutboxStore.create(ds);
    admin = new JdbcOutboxAdminStore(ds, store.dialect());
    outbox = new Outbox(OutboxConfig.builder().destinations(HTTP_BILLING, KAFKA_ORDERS).build());
  }

  @AfterEach
  void resetAll() {
    TestDatabases.execute(ds, "DELETE FROM " + ORDERS);
    TestDatabases.reset(ds);
  }

  @Test
  void theJobBecomesVisibleWhenTheCallersTransactionCommits() throws Exception {
    try (Connection c = transaction()) {
      insertOrder(c, 1);
      EnqueueResult result = outbox.enqueue(c, job("order-1/billing", "{\"order\":1}"));
      assertTrue(result.created());

      assertEquals(
          Optional.empty(),
          admin.findByOperationId("order-1/billing"),
          "other connections must not see an uncommitted job");
      assertEquals(0, orders());

      c.commit();
      StoredJob m = admin.findByOperationId("order-1/billing").orElseThrow();
      assertEquals(result.messageId(), m.id());
      assertEquals('R', m.state());
      assertEquals("{\"order\":1}", m.payload());
      assertEquals(1, orders());
    }
  }

  @Test
  void rollbackOfTheCallersTransactionLeavesNeitherJobNorBusinessRow() throws Exception {
    try (Connection c = transaction()) {
      insertOrder(c, 2);
      outbox.enqueue(c, job("order-2/billing", "{\"order\":2}"));
      outbox.enqueue(c, job("order-2/kafka", "{\"order\":2}", KAFKA_ORDERS));
      c.rollback();
    }
    assertEquals(0, TestDatabases.countMessages(ds));
    assertEquals(0, orders());
  }

  @Test
  void enqueueNeverCommitsRollsBackOrChangesAutoCommit() throws Exception {
    try (Connection real = transaction()) {
      List<String> calls = Collections.synchronizedList(new ArrayList<>());
      Connection watched = recordingTransactionCalls(real, calls);

      outbox.enqueue(watched, job("order-3/billing", "{}"));
      outbox.enqueue(watched, job("order-3/billing", "{}"));
      assertThrows(
          DuplicateOperationException.class,
          () -> outbox.enqueue(watched, job("order-3/billing", "{\"changed\":true}")));
      assertThrows(
          InvalidMessageException.class,
          () -> outbox.enqueue(watched, job("order-3/billing", "not json")));

      assertEquals(List.of(), calls, "transaction control belongs to the caller");
      assertFalse(real.getAutoCommit());
      assertEquals(
          0, TestDatabases.countMessages(ds), "nothing is visible before the caller commits");
      real.rollback();
    }
    assertEquals(0, TestDatabases.countMessages(ds));
  }

  @Test
  void reEnqueueOfTheSameJobInTheSameTransactionIsANoOp() throws Exception {
    try (Connection c = transaction()) {
      EnqueueResult first = outbox.enqueue(c, job("order-4/billing", "{\"order\":4}"));
      EnqueueResult again = outbox.enqueue(c, job("order-4/billing", "{\"order\":4}"));

      assertTrue(first.created());
      assertEquals(new EnqueueResult(first.messageId(), false), again);

      // The transaction is still usable (on PostgreSQL a failed statement would abort it).
      insertOrder(c, 4);
      c.commit();
    }
    assertEquals(1, TestDatabases.countMessages(ds));
    assertEquals(1, orders());
  }

  @Test
  void reEnqueueOfACommittedJobIsANoOp() throws Exception {
    long id;
    try (Connection c = transaction()) {
      id = outbox.enqueue(c, job("order-5/billing", "{\"order\":5}")).messageId();
      c.commit();
    }
    StoredJob before = admin.findJob(id).orElseThrow();
    try (Connection c = transaction()) {
      assertEquals(
          new EnqueueResult(id, false), outbox.enqueue(c, job("order-5/billing", "{\"order\":5}")));
      insertOrder(c, 5);
      c.commit();
    }
    assertEquals(1, TestDatabases.countMessages(ds));
    assertEquals(before, admin.findJob(id).orElseThrow(), "the existing job is untouched");
    assertEquals(1, orders());
  }

  @Test
  void reusedOperationIdWithADifferentPayloadIsRejectedAndTheTransactionGoesOn() throws Exception {
    try (Connection c = transaction()) {
      long id = outbox.enqueue(c, job("order-6/billing", "{\"order\":6}")).messageId();

      DuplicateOperationException e =
          assertThrows(
              DuplicateOperationException.class,
              () -> outbox.enqueue(c, job("order-6/billing", "{\"order\":7}")));
      assertEquals("operation_id", e.field());
      assertEquals("order-6/billing", e.operationId());
      assertEquals(id, e.existingMessageId());
      assertTrue(e.getMessage().contains("payload"), e.getMessage());

      insertOrder(c, 6);
      c.commit();
    }
    StoredJob m = admin.findByOperationId("order-6/billing").orElseThrow();
    assertEquals("{\"order\":6}", m.payload(), "nothing of the rejected job was written");
    assertEquals(1, TestDatabases.countMessages(ds));
    assertEquals(1, orders());
  }

  @Test
  void reusedOperationIdWithADifferentDestinationIsRejected() throws Exception {
    try (Connection c = transaction()) {
      outbox.enqueue(c, job("order-8/billing", "{}"));
      c.commit();
    }
    try (Connection c = transaction()) {
      DuplicateOperationException e =
          assertThrows(
              DuplicateOperationException.class,
              () -> outbox.enqueue(c, job("order-8/billing", "{}", KAFKA_ORDERS)));
      assertEquals("operation_id", e.field());
      assertTrue(e.getMessage().contains("destination ('" + HTTP_BILLING + "')"), e.getMessage());

      insertOrder(c, 8);
      c.commit();
    }
    assertEquals(
        HTTP_BILLING, admin.findByOperationId("order-8/billing").orElseThrow().destination());
    assertEquals(1, TestDatabases.countMessages(ds));
    assertEquals(1, orders());
  }

  @Test
  void reusedOperationIdWithADifferentOrderingKeyOrContentTypeIsRejected() throws Exception {
    try (Connection c = transaction()) {
      outbox.enqueue(
          c,
          OutboxMessage.builder()
              .operationId("order-9/billing")
              .destination(HTTP_BILLING)
              .payload("{}")
              .orderingKey("customer-1")
              .build());

      DuplicateOperationException key =
          assertThrows(
              DuplicateOperationException.class,
              () ->
                  outbox.enqueue(
                      c,
                      OutboxMessage.builder()
                          .operationId("order-9/billing")
                          .destination(HTTP_BILLING)
                          .payload("{}")
                          .orderingKey("customer-2")
                          .build()));
      assertTrue(key.getMessage().contains("ordering_key"), key.getMessage());

      DuplicateOperationException type =
          assertThrows(
              DuplicateOperationException.class,
              () ->
                  outbox.enqueue(
                      c,
                      OutboxMessage.builder()
                          .operationId("order-9/billing")
                          .destination(HTTP_BILLING)
                          .payload("{}")
                          .contentType("text/plain")
                          .orderingKey("customer-1")
                          .build()));
      assertTrue(type.getMessage().contains("content_type"), type.getMessage());
      c.commit();
    }
    assertEquals(1, TestDatabases.countMessages(ds));
  }

  @Test
  void reusedOperationIdWithDifferentHeadersIsRejectedWhileAnotherDelayOrTraceContextIsANoOp()
      throws Exception {
    String parent1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    String parent2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    long id;
    try (Connection c = transaction()) {
      id =
          outbox
              .enqueue(
                  c,
                  headed(
                      "order-15/billing",
                      Duration.ofHours(1),
                      Map.of("X-Tenant", "acme", "X-Region", "eu", "traceparent", parent1)))
              .messageId();
      c.commit();
    }
    StoredJob before = admin.findJob(id).orElseThrow();
    try (Connection c = transaction()) {
      for (Map<String, String> other :
          List.of(
              Map.of("X-Tenant", "acme"),
              Map.of("X-Tenant", "other", "X-Region", "eu"),
              Map.of("X-Tenant", "acme", "X-Region", "eu", "X-Extra", "1"),
              Map.of("x-tenant", "acme", "X-Region", "eu"),
              Map.<String, String>of())) {
        DuplicateOperationException e =
            assertThrows(
                DuplicateOperationException.class,
                () -> outbox.enqueue(c, headed("order-15/billing", Duration.ofHours(1), other)),
                other::toString);
        assertTrue(e.getMessage().contains("different headers"), e.getMessage());
        assertFalse(e.getMessage().contains("acme"), "names only, never values: " + e.getMessage());
      }
      // The same headers in another order, another trace context, another delay: the same job.
      Map<String, String> reordered = new LinkedHashMap<>();
      reordered.put("traceparent", parent2);
      reordered.put("X-Region", "eu");
      reordered.put("X-Tenant", "acme");
      assertEquals(
          new EnqueueResult(id, false),
          outbox.enqueue(c, headed("order-15/billing", Duration.ofMinutes(5), reordered)));
      assertEquals(
          new EnqueueResult(id, false),
          outbox.enqueue(
              c,
              headed(
                  "order-15/billing",
                  Duration.ZERO,
                  Map.of("X-Region", "eu", "X-Tenant", "acme"))));
      insertOrder(c, 15);
      c.commit();
    }
    assertEquals(
        before,
        admin.findJob(id).orElseThrow(),
        "the first job, its delay and trace context stand");
    assertEquals(1, TestDatabases.countMessages(ds));
    assertEquals(1, orders());
  }

  @Test
  void idsNoSinkCarriesUnchangedAreRefusedNamingTheCharacterAndTheTransactionGoesOn()
      throws Exception {
    try (Connection c = transaction()) {
      for (String[] bad :
          new String[][] {
            {"latin1-\u00e4", "U+00E4", "8"},
            {"latin1-\u00f6", "U+00F6", "8"},
            {"bestellung-\u00e4-\uD83D\uDE00", "U+00E4", "12"},
            {"order-\uD83D\uDE00", "U+1F600", "7"},
            {"a\u2028b", "U+2028", "2"},
            {"a\uD800b", "U+D800", "2"},
            {"a\u007fb", "U+007F", "2"},
            {"order-1 ", "U+0020", "8"}
          }) {
        InvalidCharacterException e =
            assertThrows(
                InvalidCharacterException.class,
                () -> outbox.enqueue(c, job(bad[0], "{}")),
                bad[1]);
        assertEquals("operation_id", e.field());
        assertEquals(Integer.parseInt(bad[1].substring(2), 16), e.codePoint(), e.getMessage());
        assertEquals(Integer.parseInt(bad[2]), e.position(), e.getMessage());
        assertTrue(
            e.getMessage().contains(bad[1] + " (") && e.getMessage().contains("position " + bad[2]),
            e.getMessage());
      }
      insertOrder(c, 16);
      c.commit();
    }
    assertEquals(0, TestDatabases.countMessages(ds), "nothing of a refused ID was written");
    assertEquals(1, orders());
  }

  @Test
  void everyPrintableAsciiIdIsStoredExactlyAndDistinctIdsStayDistinctJobs() throws Exception {
    StringBuilder all = new StringBuilder("!");
    for (char ch = 0x20; ch <= 0x7e; ch++) {
      all.append(ch);
    }
    all.append('~');
    // "a?b" is the text a lone surrogate would have become; case and inner spaces are significant.
    List<String> ids =
        List.of(
            all.toString(),
            "a?b",
            "Order-17",
            "order-17",
            "ORDER-17",
            "a b",
            "a  b",
            "x".repeat(OutboxConfig.MAX_OPERATION_ID_LENGTH),
            "\"quoted\"",
            "back\\slash",
            "100%25",
            "q=1;v=\"2\"");
    try (Connection c = transaction()) {
      for (String id : ids) {
        assertTrue(outbox.enqueue(c, job(id, "{}")).created(), id);
      }
      c.commit();
    }
    assertEquals(ids.size(), TestDatabases.countMessages(ds), "one job per distinct ID");
    for (String id : ids) {
      assertEquals(id, admin.findByOperationId(id).orElseThrow().operationId());
    }
  }

  @Test
  void headerValuesAndContentTypesSomeSinkWouldChangeAreRefusedNamingTheHeader() throws Exception {
    try (Connection c = transaction()) {
      for (String value :
          List.of("a\u007fb", "caf\u00e9", "\uD83D\uDE00", " acme", "acme\t", "a\rb")) {
        InvalidCharacterException e =
            assertThrows(
                InvalidCharacterException.class,
                () ->
                    outbox.enqueue(
                        c,
                        OutboxMessage.builder()
                            .operationId("order-18/billing")
                            .destination(HTTP_BILLING)
                            .payload("{}")
                            .header("X-Tenant", value)
                            .build()),
                value);
        assertEquals("headers", e.field());
        assertTrue(
            e.getMessage().startsWith("headers: value of 'X-Tenant': character U+"),
            e.getMessage());
      }
      InvalidCharacterException type =
          assertThrows(
              InvalidCharacterException.class,
              () ->
                  outbox.enqueue(
                      c,
                      OutboxMessage.builder()
                          .operationId("order-18/billing")
                          .destination(HTTP_BILLING)
                          .payload("x")
                          .contentType("text/plain; x=\u00e4\uD83D\uDE00")
                          .build()));
      assertEquals("content_type", type.field());
      assertEquals(0xE4, type.codePoint());
      assertEquals(15, type.position());
      // What is allowed arrives in the row unchanged: tab inside a value, every printable
      // character.
      assertTrue(
          outbox
              .enqueue(
                  c,
                  OutboxMessage.builder()
                      .operationId("order-18/billing")
                      .destination(HTTP_BILLING)
                      .payload("x")
                      .contentType("text/plain; charset=\"utf-8\"")
                      .header("X-Tenant", "a\tb ~!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}")
                      .header("X-Empty", "")
                      .build())
              .created());
      insertOrder(c, 18);
      c.commit();
    }
    StoredJob m = admin.findByOperationId("order-18/billing").orElseThrow();
    assertEquals("text/plain; charset=\"utf-8\"", m.contentType());
    assertEquals(
        Map.of("X-Tenant", "a\tb ~!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}", "X-Empty", ""),
        new com.fasterxml.jackson.databind.ObjectMapper()
            .readValue(
                m.headersJson(),
                new com.fasterxml.jackson.core.type.TypeReference<Map<String, String>>() {}));
    assertEquals(1, TestDatabases.countMessages(ds));
  }

  @Test
  void aDelayOverTheMaximumIsRefusedBeforeTheConnectionIsTouched() throws Exception {
    try (Connection real = transaction()) {
      List<String> calls = Collections.synchronizedList(new ArrayList<>());
      Connection untouchable =
          (Connection)
              Proxy.newProxyInstance(
                  Connection.class.getClassLoader(),
                  new Class<?>[] {Connection.class},
                  (proxy, method, args) -> {
                    calls.add(method.getName());
                    throw new SQLException("the connection must not be used: " + method.getName());
                  });
      for (Duration delay :
          List.of(
              Duration.ofSeconds(Long.MAX_VALUE),
              Duration.ofDays(365L * 1_000_000),
              OutboxConfig.MAX_DELIVER_AFTER.plusMillis(1))) {
        InvalidMessageException e =
            assertThrows(
                InvalidMessageException.class,
                () -> outbox.enqueue(untouchable, delayed("order-19/billing", delay)),
                delay::toString);
        assertEquals("deliver_after", e.field());
        assertTrue(e.getMessage().contains("over the limit of 1830 days"), e.getMessage());
        // The store's own entry point gives the same kind of answer, never an ArithmeticException.
        JdbcEnqueueStore direct = new JdbcEnqueueStore(store.dialect());
        assertEquals(
            "deliver_after",
            assertThrows(
                    InvalidMessageException.class,
                    () ->
                        direct.insert(
                            untouchable, new NewJob(delayed("order-19/billing", delay), null)))
                .field());
      }
      assertEquals(List.of(), calls);
      // The longest delay is stored, and the caller's transaction goes on.
      long id =
          outbox
              .enqueue(real, delayed("order-19/billing", OutboxConfig.MAX_DELIVER_AFTER))
              .messageId();
      insertOrder(real, 19);
      real.commit();
      StoredJob m = admin.findJob(id).orElseThrow();
      Duration stored = Duration.between(m.createdAt(), m.deliverAfter());
      assertTrue(
          stored.minus(OutboxConfig.MAX_DELIVER_AFTER).abs().compareTo(Duration.ofSeconds(5)) < 0,
          "deliver_after - created_at = " + stored);
    }
    assertEquals(1, orders());
  }

  @Test
  void invalidMessageWritesNothingAndLeavesTheTransactionUsable() throws Exception {
    try (Connection c = transaction()) {
      InvalidMessageException e =
          assertThrows(
              InvalidMessageException.class,
              () -> outbox.enqueue(c, job("order-10/billing", "{\"unterminated\":")));
      assertEquals("payload", e.field());
      insertOrder(c, 10);
      c.commit();
    }
    assertEquals(0, TestDatabases.countMessages(ds));
    assertEquals(1, orders());
  }

  @Test
  void fanOutWritesOneJobPerDestinationWithDerivedOperationIdsAllOrNone() throws Exception {
    OutboxMessage event =
        OutboxMessage.builder()
            .payload("{\"order\":12}")
            .orderingKey("order-12")
            .header("X-Event", "order-placed")
            .build();
    List<OutboxMessage> jobs =
        OutboxMessage.fanOut("order-12", event, List.of(HTTP_BILLING, KAFKA_ORDERS));
    try (Connection c = transaction()) {
      insertOrder(c, 12);
      List<EnqueueResult> results = outbox.enqueueAll(c, jobs);
      assertEquals(2, results.size());
      c.rollback();
    }
    assertEquals(0, TestDatabases.countMessages(ds), "rolled back: none");
    try (Connection c = transaction()) {
      insertOrder(c, 12);
      outbox.enqueueAll(c, jobs);
      c.commit();
    }
    for (String destination : List.of(HTTP_BILLING, KAFKA_ORDERS)) {
      StoredJob m = admin.findByOperationId("order-12/" + destination).orElseThrow();
      assertEquals(destination, m.destination());
      assertEquals("{\"order\":12}", m.payload());
      assertEquals("order-12", m.orderingKey());
      assertTrue(m.headersJson().contains("order-placed"), m.headersJson());
    }
    assertEquals(2, TestDatabases.countMessages(ds), "committed: all");
  }

  @Test
  void fanOutWithOneInvalidDestinationWritesNothing() throws Exception {
    List<OutboxMessage> jobs =
        OutboxMessage.fanOut(
            "order-13",
            OutboxMessage.builder().payload("{}").build(),
            List.of(HTTP_BILLING, "no-such-destination"));
    try (Connection c = transaction()) {
      InvalidMessageException e =
          assertThrows(InvalidMessageException.class, () -> outbox.enqueueAll(c, jobs));
      assertEquals("destination", e.field());
      c.commit();
    }
    assertEquals(
        0,
        TestDatabases.countMessages(ds),
        "validated before any insert: the valid job is not written either");
    assertEquals(
        "destination",
        assertThrows(
                InvalidMessageException.class,
                () ->
                    OutboxMessage.fanOut(
                        "order-14",
                        OutboxMessage.builder().payload("{}").build(),
                        List.of(HTTP_BILLING, HTTP_BILLING)))
            .field());
    assertEquals(
        "operation_id",
        assertThrows(
                InvalidMessageException.class,
                () ->
                    OutboxMessage.fanOut(
                        " ", OutboxMessage.builder().payload("{}").build(), List.of(HTTP_BILLING)))
            .field());
  }

  @Test
  void aConfiguredDialectSkipsDetection() throws Exception {
    Outbox preset =
        new Outbox(
            OutboxConfig.builder().destinations(HTTP_BILLING).dialect(store.dialect()).build());
    try (Connection c = transaction()) {
      assertTrue(preset.enqueue(c, job("order-11/billing", "{}")).created());
      c.commit();
    }
    assertEquals(1, TestDatabases.countMessages(ds));
  }

  // ---- helpers -------------------------------------------------------------------------------

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

  private static OutboxMessage headed(
      String operationId, Duration delay, Map<String, String> headers) {
    return OutboxMessage.builder()
        .operationId(operationId)
        .destination(HTTP_BILLING)
        .payload("{}")
        .headers(headers)
        .deliverAfter(delay)
        .build();
  }

  private static OutboxMessage delayed(String operationId, Duration delay) {
    return OutboxMessage.builder()
        .operationId(operationId)
        .destination(HTTP_BILLING)
        .payload("{}")
        .deliverAfter(delay)
        .build();
  }

  private static void insertOrder(Connection c, long id) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO " + ORDERS + " (id, note) VALUES (?, ?)")) {
      ps.setLong(1, id);
      ps.setString(2, "order " + id);
      ps.executeUpdate();
    }
  }

  private long orders() {
    return TestDatabases.queryLong(ds, "SELECT COUNT(*) FROM " + ORDERS);
  }

  /** A connection that records every call that would end or reshape the caller's transaction. */
  private static Connection recordingTransactionCalls(Connection real, List<String> calls) {
    Set<String> watched =
        Set.of(
            "commit",
            "rollback",
            "setAutoCommit",
            "setSavepoint",
            "releaseSavepoint",
            "setTransactionIsolation",
            "close",
            "abort");
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (watched.contains(method.getName())) {
                calls.add(method.getName());
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}
