package dev.outboxrelay.relay.chaos;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.inbox.InboxSchema;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.outbox.testing.TimeSpans;
import io.restassured.path.json.JsonPath;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment inbox-kill: the receiving side under faults. Two relay processes deliver to a receiver
 * process built on the inbox ({@link InboxChaosReceiver}: plain JDBC, the JDK HTTP server, its own
 * PostgreSQL schema and business table); every second or two a random one of the three is SIGKILLed
 * and replaced, and the receiver also halts by itself right after a commit, before its answer, for
 * a share of deliveries. The verdict is counted in the receiver's business table, not in the inbox:
 * every job applied exactly once; then a reconciliation run over the receiver's {@code http-ledger}
 * reports every job {@code matched} and nothing else. Prints {@code CHAOS inbox-kill jobs=N
 * applied=N lost=0 duplicates=0 reconciliation_matched=N other=0 ...}.
 */
@ExtendWith(ChaosReporter.class)
class InboxKillChaosIT {
  static final String RECEIVER_SCHEMA = "chaos_inbox_receiver";
  static final String SECRET = "inbox-kill-" + System.nanoTime();

  @Test
  void relayAndReceiverKilledAtRandomApplyEveryJobOnceAndReconcileAllMatched() throws Exception {
    int jobs = ChaosExperiment.scaled(500, 20_000);
    long seed = Long.getLong("chaos.seed", System.nanoTime());
    Random random = new Random(seed);
    DataSource receiverDb = receiverDatabase();
    int receiverPort = ServiceProcess.freePort();
    try (ChaosExperiment x = ChaosExperiment.start("inbox-kill");
        Receivers receivers = new Receivers(x, receiverPort)) {
      // The experiment resets jobs and attempts; earlier runs' reconciliations must go too.
      for (String table : List.of("outbox_reconciliation_item", "outbox_reconciliation_run")) {
        TestDatabases.update(x.dataSource(), "DELETE FROM " + table);
      }
      Map<String, String> relay = relaySettings(receiverPort);
      x.enqueue(jobs);
      List<ServiceProcess> relays =
          new ArrayList<>(List.of(x.launchRelay(relay), x.launchRelay(relay)));
      int relayKills = 0;
      int receiverKills = 0;
      long killUntil =
          System.nanoTime() + Duration.ofMinutes(ChaosExperiment.scaled(2, 15)).toNanos();
      long giveUp = killUntil + Duration.ofMinutes(3).toNanos();
      long nextKill = System.nanoTime() + killGapNanos(random);
      // Kill while work is left (the receiver and a relay at least once), then only keep the
      // receiver up (it may still halt after a commit) until every job settled.
      while ((x.count("state IN ('R','W')") > 0 || relayKills == 0 || receiverKills == 0)
          && System.nanoTime() < giveUp) {
        receivers.restartIfHalted();
        if (System.nanoTime() >= nextKill && System.nanoTime() < killUntil) {
          int victim = random.nextInt(relays.size() + 1);
          if (victim == relays.size()) {
            receivers.kill();
            receiverKills++;
          } else if (relays.get(victim).live()) { // started; not ready while the receiver is down
            relays.get(victim).kill();
            relays.set(victim, x.launchRelay(relay));
            relayKills++;
          }
          nextKill = System.nanoTime() + killGapNanos(random);
        }
        TimeSpans.letPass(Duration.ofMillis(50)); // the kill schedule's tick
      }
      receivers.restartIfHalted();
      for (ServiceProcess r : relays) {
        r.awaitListening(Duration.ofSeconds(120));
      }
      // The receiver may still halt after a commit while the rest drains: keep replacing it.
      x.awaitCondition(
          "every job settled (no R or W), a halted receiver replaced",
          Duration.ofMinutes(ChaosExperiment.scaled(3, 10)),
          () -> {
            try {
              receivers.restartIfHalted();
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
            return x.count("state IN ('R','W')") == 0;
          });
      assertEquals(jobs, x.count("state = 'S'"), "every job sent: " + x.countByState());

      long applied =
          TestDatabases.queryLong(
              receiverDb, "SELECT COUNT(DISTINCT operation_id) FROM " + InboxChaosReceiver.EFFECT);
      long duplicates =
          TestDatabases.queryLong(
              receiverDb,
              "SELECT COUNT(*) - COUNT(DISTINCT operation_id) FROM " + InboxChaosReceiver.EFFECT);
      long lost = jobs - applied;
      Map<String, Integer> counts = reconcile(x, relays.get(0));
      int matched = counts.getOrDefault("matched", 0);
      int other = counts.values().stream().mapToInt(Integer::intValue).sum() - matched;
      long redeliveries =
          TestDatabases.queryLong(
              receiverDb, "SELECT COALESCE(SUM(deliveries - 1), 0) FROM outbox_inbox");
      ChaosExperiment.report(
          String.format(
              Locale.ROOT,
              "CHAOS %s jobs=%d applied=%d lost=%d duplicates=%d reconciliation_matched=%d other=%d"
                  + " redeliveries=%d relay_kills=%d receiver_kills=%d receiver_halts_after_commit=%d",
              x.name(),
              jobs,
              applied,
              lost,
              duplicates,
              matched,
              other,
              redeliveries,
              relayKills,
              receiverKills,
              receivers.halts()));
      System.out.printf("CHAOS-DETAIL %s seed=%d reconciliation=%s%n", x.name(), seed, counts);
      assertEquals(0, lost, "lost effects");
      assertEquals(0, duplicates, "duplicate effects");
      assertEquals(jobs, matched, "reconciliation matched every job: " + counts);
      assertEquals(0, other, "reconciliation found nothing else: " + counts);
      assertTrue(relayKills >= 1 && receiverKills >= 1, "relays and the receiver were killed");
      assertTrue(receivers.halts() >= 1, "the receiver halted between a commit and its answer");
    }
  }

  /** 2 to 5 s: a receiver or relay restarting on a loaded machine takes seconds itself. */
  private static long killGapNanos(Random random) {
    return Duration.ofMillis(2_000 + random.nextInt(3_000)).toNanos();
  }

  /** The relay settings of the experiment: the receiver's webhook, signed, and its ledger. */
  private static Map<String, String> relaySettings(int receiverPort) throws Exception {
    String d = "outbox.destinations." + ChaosExperiment.DESTINATION;
    Map<String, String> p = new LinkedHashMap<>();
    p.put(d + ".url", "http://127.0.0.1:" + receiverPort + "/deliveries");
    p.put(d + ".hmac-secret", SECRET);
    p.put(d + ".confirmation.type", "http-ledger");
    p.put(d + ".confirmation.url", "http://127.0.0.1:" + receiverPort + "/ledger");
    p.put("outbox.relay.concurrency", "8");
    p.put("outbox.relay.batch-size", "8");
    // The receiver is down for a second or more after each kill: retries must outlast the run.
    p.put("outbox.relay.max-attempts", "1000");
    p.put("outbox.reconciliation.enabled", "false");
    p.put("outbox.reconciliation.grace-period", "1s");
    p.put(
        "quarkus.security.users.embedded.users.op",
        ReconciliationCategoriesIT.sha512Hex("op:Quarkus:" + ReconciliationCategoriesIT.PASSWORD));
    p.put("quarkus.security.users.embedded.roles.op", "outbox-operator");
    return p;
  }

  /** The receiver's own schema: the inbox and its business table, emptied. */
  private static DataSource receiverDatabase() {
    DataSource ds = TestDatabases.postgres(RECEIVER_SCHEMA);
    InboxSchema.migrate(ds);
    TestDatabases.execute(
        ds,
        "CREATE TABLE IF NOT EXISTS "
            + InboxChaosReceiver.EFFECT
            + " (operation_id VARCHAR(200) NOT NULL, payload TEXT NOT NULL)");
    TestDatabases.update(ds, "DELETE FROM " + InboxChaosReceiver.EFFECT);
    TestDatabases.update(ds, "DELETE FROM outbox_inbox");
    return ds;
  }

  /** One reconciliation run over the receiver's ledger once every job is past the grace period. */
  private static Map<String, Integer> reconcile(ChaosExperiment x, ServiceProcess relay)
      throws Exception {
    x.awaitCondition(
        "every job past the 1s grace period",
        Duration.ofSeconds(30),
        () -> x.count("sent_at > CURRENT_TIMESTAMP - INTERVAL '2' SECOND") == 0);
    JsonPath run =
        given()
            .baseUri(relay.baseUri().toString())
            .auth()
            .preemptive()
            .basic("op", ReconciliationCategoriesIT.PASSWORD)
            .post("/reconciliation/runs")
            .then()
            .statusCode(201)
            .extract()
            .jsonPath();
    return run.getMap("counts");
  }

  /** The receiver process: relaunched on the same port after every kill or halt. */
  private static final class Receivers implements AutoCloseable {
    private final ChaosExperiment x;
    private final int port;
    private final Map<String, String> settings = new LinkedHashMap<>();
    private ServiceProcess current;
    private int started;
    private int halts;

    Receivers(ChaosExperiment x, int port) throws Exception {
      this.x = x;
      this.port = port;
      Map<String, String> db = ChaosDatabase.POSTGRESQL.relayConnection(RECEIVER_SCHEMA);
      String prefix = "quarkus.datasource." + ChaosDatabase.POSTGRESQL.datasource();
      settings.put("receiver.jdbc.url", db.get(prefix + ".jdbc.url"));
      settings.put("receiver.jdbc.user", db.get(prefix + ".username"));
      settings.put("receiver.destination", ChaosExperiment.DESTINATION);
      settings.put("receiver.hmac-secret", SECRET);
      settings.put("receiver.halt-after-commit", ChaosExperiment.large() ? "0.001" : "0.005");
      // Until one has: every receiver halts at its 20th commit, so the run surely has a halt.
      settings.put("receiver.halt-at-commit", "20");
      launch();
    }

    /**
     * Starts a receiver and waits until it answers. Relays deliver as soon as it listens, so it may
     * halt after a commit (the fault under test) before its health check answered: that counts as a
     * halt and another one starts.
     */
    private void launch() throws Exception {
      while (true) {
        current =
            ServiceProcess.launchMain(
                "receiver-" + (++started),
                InboxChaosReceiver.class.getName(),
                jar ->
                    jar.contains("outbox-lib")
                        || jar.contains("postgresql")
                        || jar.contains("jackson"),
                port,
                settings,
                Path.of("target", "chaos", x.name()).toAbsolutePath());
        try {
          current.awaitReady(Duration.ofSeconds(60));
          return;
        } catch (RuntimeException e) {
          if (!haltedByItself()) {
            throw e;
          }
          countHalt();
        }
      }
    }

    private boolean haltedByItself() throws IOException {
      return !current.alive() && current.logText().contains(InboxChaosReceiver.HALT_LINE);
    }

    private void countHalt() {
      halts++;
      settings.remove("receiver.halt-at-commit");
    }

    /** A receiver that halted by itself after a commit is counted and replaced. */
    void restartIfHalted() throws Exception {
      if (!current.alive()) {
        if (!haltedByItself()) {
          throw new IllegalStateException("the receiver exited by itself:\n" + current.tail());
        }
        countHalt();
        launch();
      }
    }

    void kill() throws Exception {
      current.kill();
      launch();
    }

    int halts() {
      return halts;
    }

    @Override
    public void close() throws InterruptedException {
      current.close();
    }
  }
}
