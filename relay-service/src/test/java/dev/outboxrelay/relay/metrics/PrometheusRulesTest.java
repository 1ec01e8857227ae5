package dev.outboxrelay.relay.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The alert rules pass {@code promtool check rules} and their unit tests ({@code promtool test
 * rules}, sample series under which each alert must fire or stay quiet); every alert says what it
 * means and what to do; the dashboard is JSON Grafana can import (a Prometheus data-source input,
 * PromQL in every panel). Debian's {@code prometheus} package provides {@code promtool}.
 */
class PrometheusRulesTest {
  static final Set<String> ALERTS =
      Set.of(
          "OutboxBacklogTooOld",
          "OutboxDeadJobsIncreasing",
          "OutboxReconciliationMismatch",
          "OutboxReconciliationNotRunning",
          "OutboxSourceDown",
          "OutboxDestinationDown",
          "OutboxStaleCompletionsClimbing");

  @Test
  void promtoolAcceptsTheRules() throws Exception {
    String out = promtool("check", "rules", MonitoringFiles.RULES.toString());
    // OutboxReconciliationNotRunning is two rules: a run too long ago, and none ever while enabled.
    assertTrue(
        out.contains("SUCCESS: " + MonitoringFiles.alertRules().size() + " rules found"), out);
    assertEquals(ALERTS.size() + 1, MonitoringFiles.alertRules().size());
  }

  @Test
  void theAlertsFireOnTheirSampleSeriesAndStayQuietOtherwise() throws Exception {
    String out = promtool("test", "rules", MonitoringFiles.RULE_TESTS.toString());
    assertTrue(out.contains("SUCCESS"), out);
    String tests = Files.readString(MonitoringFiles.RULE_TESTS);
    for (String alert : ALERTS) {
      assertTrue(tests.contains("alertname: " + alert), alert + " has unit tests");
    }
  }

  @Test
  void everyAlertHasASummaryARunbookLineAndASeverity() throws IOException {
    List<Map<String, Object>> rules = MonitoringFiles.alertRules();
    Set<String> names = new TreeSet<>();
    for (Map<String, Object> rule : rules) {
      String name = (String) rule.get("alert");
      names.add(name);
      @SuppressWarnings("unchecked")
      Map<String, String> annotations = (Map<String, String>) rule.get("annotations");
      @SuppressWarnings("unchecked")
      Map<String, String> labels = (Map<String, String>) rule.get("labels");
      assertFalse(annotations.getOrDefault("summary", "").isBlank(), name + " summary");
      assertFalse(annotations.getOrDefault("runbook", "").isBlank(), name + " runbook");
      assertTrue(Set.of("page", "ticket").contains(labels.get("severity")), name + " severity");
      String docs = Files.readString(MonitoringFiles.ROOT.resolve("docs/operations.md"));
      assertTrue(docs.contains("`" + name + "`"), name + " is explained in docs/operations.md");
    }
    assertEquals(ALERTS, names);
  }

  @Test
  void theDashboardIsImportableAndEveryPanelHasAQuery() throws IOException {
    com.fasterxml.jackson.databind.JsonNode dash =
        new com.fasterxml.jackson.databind.ObjectMapper()
            .readTree(MonitoringFiles.DASHBOARD.toFile());
    assertEquals("DS_PROMETHEUS", dash.path("__inputs").path(0).path("name").asText());
    assertEquals("outbox-relay", dash.path("uid").asText());
    int panels = 0;
    for (com.fasterxml.jackson.databind.JsonNode panel : dash.path("panels")) {
      if (panel.path("type").asText().equals("row")) {
        continue;
      }
      panels++;
      assertTrue(panel.path("targets").size() > 0, panel.path("title").asText());
      for (com.fasterxml.jackson.databind.JsonNode t : panel.path("targets")) {
        assertFalse(
            MonitoringFiles.metrics(t.path("expr").asText()).isEmpty(), t.path("expr").asText());
        assertEquals("${DS_PROMETHEUS}", t.path("datasource").path("uid").asText());
      }
    }
    assertTrue(
        panels >= 10,
        "backlog, age, throughput, dead, latencies, ownership, states, reconciliation");
  }

  private static String promtool(String... args) throws Exception {
    if (!Files.isExecutable(MonitoringFiles.PROMTOOL)) {
      throw new AssertionError(
          MonitoringFiles.PROMTOOL
              + " is missing: install Debian's prometheus package"
              + " (the test set-up does)");
    }
    List<String> command = new java.util.ArrayList<>(List.of(MonitoringFiles.PROMTOOL.toString()));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .directory(MonitoringFiles.RULES.getParent().toFile())
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool finished");
    assertEquals(0, p.exitValue(), "promtool " + String.join(" ", args) + ":\n" + out);
    return out;
  }
}
