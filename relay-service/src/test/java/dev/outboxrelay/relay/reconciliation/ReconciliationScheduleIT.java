package dev.outboxrelay.relay.reconciliation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.relay.chaos.ChaosExperiment;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Two relay processes (the packaged jar) run the reconciliation schedule at once, every second,
 * against one PostgreSQL schema, with a {@code table} confirmation source that this test fills as
 * an external consumer would. Each window is reconciled by exactly one run, runs never overlap in
 * time (the database lease), every run finishes with a verdict, and both relays show the fleet's
 * latest run in their metrics, whichever relay ran it.
 */
class ReconciliationScheduleIT {
  static final int JOBS = 20;

  @Test
  void twoRelaysOnOneScheduleReconcileEachWindowOnce() throws Exception {
    try (ChaosExperiment exp = ChaosExperiment.start("reconciliation-schedule")) {
      DataSource ds = exp.dataSource();
      for (String table :
          List.of(
              "outbox_reconciliation_item",
              "outbox_reconciliation_run",
              "outbox_confirmation",
              "outbox_lock")) {
        TestDatabases.execute(ds, "DELETE FROM " + table);
      }
      Map<String, String> schedule =
          Map.of(
              "outbox.destinations." + ChaosExperiment.DESTINATION + ".confirmation.type",
              "table",
              "outbox.reconciliation.enabled",
              "true",
              "outbox.reconciliation.interval",
              "1s",
              "outbox.reconciliation.window",
              "5m",
              "outbox.reconciliation.grace-period",
              "0s",
              "outbox.reconciliation.lease",
              "30s");
      // Both start at once (their start-ups overlap instead of adding up), as a fleet would.
      List<ServiceProcess> relays = List.of(exp.launchRelay(schedule), exp.launchRelay(schedule));
      for (ServiceProcess relay : relays) {
        relay.awaitReady(Duration.ofSeconds(90));
      }

      exp.enqueue(JOBS);
      exp.awaitCondition(
          "every job sent", Duration.ofSeconds(60), () -> exp.count("state = 'S'") == JOBS);
      // The external consumer: one confirmation per applied operation ID.
      for (ChaosSinkKey key : appliedKeys(exp)) {
        TestDatabases.update(
            ds,
            "INSERT INTO outbox_confirmation (operation_id, destination, confirmed_at,"
                + " applied_count, source) VALUES (?, ?, now(), 1, 'test-consumer')",
            key.op(),
            ChaosExperiment.DESTINATION);
      }
      exp.awaitCondition(
          "every job confirmed by a scheduled run",
          Duration.ofSeconds(60),
          () -> exp.count("state = 'C'") == JOBS);
      long runsSoFar = runs(ds);
      exp.awaitCondition(
          "five more scheduled runs", Duration.ofSeconds(60), () -> runs(ds) >= runsSoFar + 5);
      for (ServiceProcess relay : relays) {
        exp.awaitCondition(
            relay.name() + " shows the fleet's latest run",
            Duration.ofSeconds(30),
            () ->
                ChaosExperiment.metric(relay, "outbox_reconciliation_items", "category", "matched")
                        == JOBS
                    && ChaosExperiment.metric(relay, "outbox_reconciliation_last_run_age_seconds")
                        < 30);
      }
      ServiceProcess.closeAll(relays);

      List<String> rows =
          exp.rows(
              "SELECT window_start, window_end, started_at, finished_at, triggered_by, owner,"
                  + " matched, error FROM outbox_reconciliation_run ORDER BY started_at, id");
      assertTrue(rows.size() >= 6, "runs: " + rows);
      Set<Instant> windowEnds = new HashSet<>();
      Set<String> owners = new HashSet<>();
      Instant previousFinish = Instant.MIN;
      for (String row : rows) {
        String[] c = row.split("\\|", -1);
        Instant start = instant(c[0]);
        Instant end = instant(c[1]);
        Instant startedAt = instant(c[2]);
        Instant finishedAt = instant(c[3]);
        assertTrue(windowEnds.add(end), "window ending " + end + " reconciled twice: " + rows);
        assertEquals(0, end.toEpochMilli() % 1000, "window ends on the interval: " + row);
        assertEquals(Duration.ofMinutes(5), Duration.between(start, end), row);
        assertEquals("schedule", c[4], row);
        assertEquals("null", c[7], "run finished with a verdict: " + row);
        assertFalse(startedAt.isBefore(previousFinish), "runs overlap in time: " + rows);
        previousFinish = finishedAt;
        owners.add(c[5]);
      }
      for (ServiceProcess relay : relays) {
        assertFalse(
            relay.logText().contains("scheduled reconciliation failed"),
            relay.name() + ":\n" + relay.tail());
      }
      System.out.println(
          "RECONCILIATION schedule runs=" + rows.size() + " owners=" + owners.size());
    }
  }

  record ChaosSinkKey(String op) {}

  private static List<ChaosSinkKey> appliedKeys(ChaosExperiment exp) {
    List<ChaosSinkKey> keys = new ArrayList<>();
    exp.sink().deliveries().stream()
        .map(d -> d.key())
        .distinct()
        .forEach(k -> keys.add(new ChaosSinkKey(k)));
    assertEquals(JOBS, keys.size(), "the sink applied every job");
    return keys;
  }

  private static long runs(DataSource ds) {
    return TestDatabases.queryLong(
        ds, "SELECT COUNT(*) FROM outbox_reconciliation_run WHERE finished_at IS NOT NULL");
  }

  private static Instant instant(String pgText) {
    return OffsetDateTime.parse(pgText.replace(' ', 'T').replaceFirst("([+-]\\d\\d)$", "$1:00"))
        .toInstant();
  }
}
