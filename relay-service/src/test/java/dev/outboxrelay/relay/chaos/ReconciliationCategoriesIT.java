package dev.outboxrelay.relay.chaos;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import io.restassured.path.json.JsonPath;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every reconciliation category, each made by a real fault rather than by editing a ledger: healthy
 * jobs ({@code matched}); a sink that answers 200 but never applies ({@code sent_unconfirmed}); a
 * relay SIGKILLed after the sink applied but before it recorded {@code S} ({@code
 * confirmed_not_sent}: the job is still leased by the dead relay); a sink that ignores the
 * idempotency key and applies a redelivery again ({@code duplicate_effects}); a poison job ({@code
 * dead}). The sink's own record of what it applied is written to {@code outbox_confirmation}, as an
 * external consumer would (the {@code table} confirmation source), and a second relay process,
 * which delivers nothing, runs the reconciliation over HTTP with an operator login.
 */
class ReconciliationCategoriesIT {
  static final String PASSWORD = "op-" + System.nanoTime();

  @Test
  void eachFaultLandsInItsCategory() throws Exception {
    try (ChaosExperiment x = ChaosExperiment.start("reconciliation-categories")) {
      // The experiment resets jobs and attempts; what an earlier run confirmed must go too.
      try (Connection c = x.dataSource().getConnection();
          var s = c.createStatement()) {
        for (String table :
            List.of(
                "outbox_reconciliation_item",
                "outbox_reconciliation_run",
                "outbox_confirmation",
                "outbox_lock")) {
          s.execute("DELETE FROM " + table);
        }
      }
      Map<String, String> common = new LinkedHashMap<>();
      common.put(
          "outbox.destinations." + ChaosExperiment.DESTINATION + ".confirmation.type", "table");
      common.put("outbox.reconciliation.enabled", "false");
      common.put("outbox.reconciliation.grace-period", "1s");
      common.put("quarkus.security.users.embedded.users.op", sha512Hex("op:Quarkus:" + PASSWORD));
      common.put("quarkus.security.users.embedded.roles.op", "outbox-operator");
      Map<String, String> deliverer = new LinkedHashMap<>(common);
      // A long lease: the job the victim held stays W (its lease alive) while reconciliation runs.
      deliverer.put("outbox.relay.lease-duration", "60s");
      ServiceProcess victim = x.startRelay(deliverer);
      CompletableFuture<Void> killed = new CompletableFuture<>();
      x.sink()
          .behave(
              d ->
                  switch (d.key()) {
                    case "lost-1" -> new ChaosSink.Action.AcceptWithoutApplying();
                    case "twice-1" -> new ChaosSink.Action.ApplyIgnoringKey(d.attempt() > 1);
                    case "poison-1" -> ChaosSink.Action.status(422);
                    case "killed-1" -> {
                      victim.kill(); // dies while waiting for this answer; the effect is applied
                      // after
                      killed.complete(null);
                      yield new ChaosSink.Action.ApplyThenDrop();
                    }
                    default -> ChaosSink.Action.ok();
                  });
      List<String> settled =
          List.of("ok-1", "ok-2", "ok-3", "ok-4", "ok-5", "lost-1", "twice-1", "poison-1");
      enqueue(x, settled);
      x.awaitCondition(
          "every job but the last settled",
          Duration.ofSeconds(60),
          () -> x.count("state IN ('S', 'D')") == settled.size());
      enqueue(x, List.of("killed-1"));
      killed.get(60, TimeUnit.SECONDS);
      assertEquals(
          List.of("W"), x.rows("SELECT state FROM outbox_message WHERE operation_id = 'killed-1'"));

      // What the sink applied, as its owner would confirm it.
      Map<String, Integer> applied = new TreeMap<>(x.sink().applications());
      assertEquals(
          Map.of(
              "killed-1", 1, "ok-1", 1, "ok-2", 1, "ok-3", 1, "ok-4", 1, "ok-5", 1, "twice-1", 2),
          applied);
      try (Connection c = x.dataSource().getConnection();
          PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at, applied_count, source)"
                      + " VALUES (?, ?, now(), ?, 'chaos-sink')")) {
        for (Map.Entry<String, Integer> e : applied.entrySet()) {
          ps.setString(1, e.getKey());
          ps.setString(2, ChaosExperiment.DESTINATION);
          ps.setInt(3, e.getValue());
          ps.executeUpdate();
        }
      }
      x.awaitCondition(
          "the grace period (1s) over for every S job, by the database clock",
          Duration.ofSeconds(30),
          () -> x.count("state = 'S' AND sent_at > now() - interval '1 second'") == 0);

      Map<String, String> reconciler = new LinkedHashMap<>(common);
      reconciler.put("outbox.relay.enabled", "false");
      ServiceProcess relay = x.startRelay(reconciler);
      JsonPath run =
          given()
              .baseUri(relay.baseUri().toString())
              .auth()
              .preemptive()
              .basic("op", PASSWORD)
              .post("/reconciliation/runs")
              .then()
              .statusCode(201)
              .extract()
              .jsonPath();
      Map<String, Integer> expected = new LinkedHashMap<>();
      expected.put("matched", 5);
      expected.put("sent_unconfirmed", 1);
      expected.put("confirmed_not_sent", 1);
      expected.put("duplicate_effects", 1);
      expected.put("dead", 1);
      assertEquals(expected, run.getMap("counts"));
      Map<String, String> categories = new TreeMap<>();
      Map<String, String> states = new TreeMap<>();
      for (Map<String, Object> item : run.<Map<String, Object>>getList("items")) {
        categories.put((String) item.get("operation_id"), (String) item.get("category"));
        states.put((String) item.get("operation_id"), (String) item.get("state"));
      }
      assertEquals(
          Map.of(
              "lost-1",
              "sent_unconfirmed",
              "killed-1",
              "confirmed_not_sent",
              "twice-1",
              "duplicate_effects",
              "poison-1",
              "dead"),
          categories);
      assertEquals(Map.of("lost-1", "S", "killed-1", "W", "twice-1", "S", "poison-1", "D"), states);
      assertEquals(5L, x.count("state = 'C'"), "matched jobs are confirmed");
      System.out.println("RECONCILIATION categories=" + run.getMap("counts"));
    }
  }

  private static void enqueue(ChaosExperiment x, List<String> ops) throws Exception {
    Outbox outbox =
        new Outbox(OutboxConfig.builder().destinations(ChaosExperiment.DESTINATION).build());
    try (Connection c = x.dataSource().getConnection()) {
      c.setAutoCommit(false);
      for (String op : ops) {
        outbox.enqueue(
            c,
            OutboxMessage.builder()
                .operationId(op)
                .destination(ChaosExperiment.DESTINATION)
                .payload("{\"op\":\"" + op + "\"}")
                .build());
      }
      c.commit();
    }
  }

  static String sha512Hex(String text) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-512").digest(text.getBytes(StandardCharsets.UTF_8)));
  }
}
