package dev.outboxrelay.demo.sink;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.demo.DemoH2Server;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BillingConsumers} under real crashes between a commit and its acknowledgement. The
 * receiver is demo-orders' packaged application, a process of its own under the broker's config
 * profile, on an H2 server this test holds (so the database outlives the receivers). The test
 * publishes {@value #OPERATIONS} operations, every {@value #REPEAT_EVERY}th twice; the receiver's
 * test fault hook ({@link CommitAckFaultHook}) holds back the acknowledgement of its {@value
 * #STALL_AT}th message after the transaction committed, and the test SIGKILLs it right there,
 * {@value #KILLS} times, each time starting a new receiver (the last one without the hook). The
 * verdict is counted in the business table {@code demo_invoice}, not in the inbox: every operation
 * applied exactly once, no duplicate; the inbox answered every redelivery as a repeat ("already
 * applied"), the held-back messages' included. Prints {@code FAULT consumer-kill <destination>
 * published=N operations=N applied=N duplicates=0 kills_between_commit_and_ack=K repeats=R ...}.
 */
abstract class BillingConsumersKillContract {
  static final int OPERATIONS = 200;
  static final int REPEAT_EVERY = 4;

  /**
   * Each receiver with the hook holds back its 50th acknowledgement: well inside the 250 messages.
   */
  static final int STALL_AT = 50;

  static final int KILLS = 3;

  /**
   * A receiver took 70 s to start on a loaded 2-core machine: the waits allow for that, not more.
   */
  static final Duration PATIENCE = Duration.ofMinutes(3);

  private ServiceProcess receiver;

  /** The relay's destination name the consumer receives for (the inbox's {@code destination}). */
  abstract String destination();

  /** The config profile under which application.properties configures the broker's channel. */
  abstract String configProfile();

  /** Starts the broker's side of the test (files under {@code work}) before the first receiver. */
  abstract void startBroker(Path work) throws Exception;

  /** The receiver's settings that point its channel at this test's broker. */
  abstract Map<String, String> brokerSettings();

  /**
   * Waits until the first receiver consumes, so that nothing is published before its queue exists.
   */
  abstract void awaitConsuming() throws Exception;

  /**
   * Publishes as the relay's sink does: {@code payload} with {@code operationId} where the reader
   * looks.
   */
  abstract void publish(String operationId, String payload) throws Exception;

  /**
   * Checks the broker while the receiver holds back the acknowledgement of the message at {@code
   * where} (as {@link CommitAckFaultHook} prints it), its invoice committed.
   */
  abstract void whileHeldBack(String where, DataSource db) throws Exception;

  /** True once the broker has nothing left to deliver: every message acknowledged. */
  abstract boolean drained() throws Exception;

  /** Releases what {@link #startBroker} took. */
  abstract void stopBroker() throws Exception;

  @AfterEach
  void stopBrokerSide() throws Exception {
    stopBroker();
  }

  @Test
  void killedBetweenCommitAndAckEveryOperationAppliesOnce() throws Exception {
    long started = System.nanoTime();
    String name = "consumer-kill-" + configProfile();
    Path work = Path.of("target", name).toAbsolutePath();
    deleteTree(
        work); // the receivers' logs are appended to: an earlier run's stall line must not count
    startBroker(work);
    try (DemoH2Server h2 = DemoH2Server.start(work, name)) {
      try {
        publishKillAndCount(h2, work, started);
      } finally {
        if (receiver != null) {
          receiver.close(); // before its database goes
        }
      }
    }
  }

  private void publishKillAndCount(DemoH2Server h2, Path work, long started) throws Exception {
    DataSource db = h2.dataSource();
    receiver = launchReceiver(1, h2.url(), work, true);
    awaitConsuming();
    int messages = 0;
    for (int i = 0; i < OPERATIONS; i++) {
      for (int copy = 0; copy < (i % REPEAT_EVERY == 0 ? 2 : 1); copy++) {
        publish(op(i), "{\"order\":" + i + "}");
        messages++;
      }
    }
    List<String> heldBack = new ArrayList<>();
    for (int kill = 1; kill <= KILLS; kill++) {
      Stall stall = awaitStall(receiver);
      assertEquals(
          1,
          invoices(db, stall.operationId()),
          "the invoice of "
              + stall.operationId()
              + " is committed while its acknowledgement is held back");
      whileHeldBack(stall.where(), db);
      receiver.kill();
      heldBack.add(stall.operationId());
      receiver = launchReceiver(kill + 1, h2.url(), work, kill < KILLS);
    }
    int published = messages;
    ServiceProcess last = receiver;
    await("every operation applied and every message acknowledged")
        .atMost(PATIENCE)
        .until(
            () -> {
              if (!last.alive()) {
                throw new IllegalStateException(last.name() + " exited:\n" + last.tail());
              }
              return applied(db) == OPERATIONS && deliveries(db) >= published + KILLS && drained();
            });

    long applied = applied(db);
    long duplicates = TestDatabases.queryLong(db, "SELECT COUNT(*) FROM demo_invoice") - applied;
    long repeats =
        deliveries(db)
            - TestDatabases.queryLong(
                db, "SELECT COUNT(*) FROM outbox_inbox WHERE destination = ?", destination());
    System.out.printf(
        Locale.ROOT,
        "FAULT consumer-kill %s published=%d operations=%d applied=%d duplicates=%d"
            + " kills_between_commit_and_ack=%d repeats=%d receivers=%d seconds=%d held_back=%s%n",
        destination(),
        published,
        OPERATIONS,
        applied,
        duplicates,
        heldBack.size(),
        repeats,
        KILLS + 1,
        Duration.ofNanos(System.nanoTime() - started).toSeconds(),
        heldBack);
    assertEquals(OPERATIONS, applied, "operations with an invoice");
    assertEquals(0, duplicates, "invoices beyond one per operation");
    assertTrue(heldBack.size() >= 3, "kills between a commit and its acknowledgement: " + heldBack);
    assertTrue(
        repeats >= published - OPERATIONS + KILLS,
        "repeats answered as already applied: "
            + repeats
            + " (at least "
            + (published - OPERATIONS)
            + " published twice and "
            + KILLS
            + " held back)");
    for (String op : heldBack) {
      assertEquals(1, invoices(db, op), "invoices of the held-back " + op);
      assertTrue(
          deliveries(db, op) >= 2,
          op
              + " was delivered again after the kill and answered as"
              + " already applied: "
              + deliveries(db, op)
              + " deliveries");
    }
  }

  private static String op(int i) {
    return "order-" + i;
  }

  /**
   * A receiver process; with {@code hook} it holds back its {@value #STALL_AT}th acknowledgement.
   */
  private ServiceProcess launchReceiver(int number, String dbUrl, Path work, boolean hook)
      throws IOException {
    Map<String, String> p = new LinkedHashMap<>(brokerSettings());
    p.put("quarkus.profile", "prod," + configProfile());
    p.put("quarkus.datasource.jdbc.url", dbUrl);
    if (hook) {
      p.put(CommitAckFaultHook.PROPERTY, String.valueOf(STALL_AT));
    }
    return ServiceProcess.launch(
        "receiver-" + number,
        ServiceProcess.moduleJar("demo-orders"),
        ServiceProcess.freePort(),
        p,
        work);
  }

  /**
   * The operation ID and origin {@link CommitAckFaultHook} printed when it held an acknowledgement
   * back.
   */
  record Stall(String operationId, String where) {}

  private static Stall awaitStall(ServiceProcess receiver) {
    String line =
        await(receiver.name() + " holding back an acknowledgement after a commit")
            .atMost(PATIENCE)
            .until(() -> stallLine(receiver), Objects::nonNull);
    String[] parts =
        line.substring(
                line.indexOf(CommitAckFaultHook.STALL_LINE)
                    + CommitAckFaultHook.STALL_LINE.length())
            .trim()
            .split(" ", 2);
    return new Stall(parts[0], parts[1]);
  }

  private static String stallLine(ServiceProcess receiver) throws IOException {
    if (!receiver.alive()) {
      throw new IllegalStateException(receiver.name() + " exited:\n" + receiver.tail());
    }
    return receiver
        .logText()
        .lines()
        .filter(l -> l.contains(CommitAckFaultHook.STALL_LINE))
        .findFirst()
        .orElse(null);
  }

  static long invoices(DataSource db, String operationId) {
    return TestDatabases.queryLong(
        db, "SELECT COUNT(*) FROM demo_invoice WHERE operation_id = ?", operationId);
  }

  private static long applied(DataSource db) {
    return TestDatabases.queryLong(db, "SELECT COUNT(DISTINCT operation_id) FROM demo_invoice");
  }

  /**
   * Deliveries the inbox received for this destination: the first of each operation and every
   * repeat.
   */
  private long deliveries(DataSource db) {
    return TestDatabases.queryLong(
        db,
        "SELECT COALESCE(SUM(deliveries), 0) FROM outbox_inbox WHERE destination = ?",
        destination());
  }

  private long deliveries(DataSource db, String operationId) {
    return TestDatabases.queryLong(
        db,
        "SELECT COALESCE(SUM(deliveries), 0) FROM outbox_inbox"
            + " WHERE destination = ? AND operation_id = ?",
        destination(),
        operationId);
  }

  private static void deleteTree(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (var paths = Files.walk(dir)) {
        for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }
}
