package dev.outboxrelay.relay.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;

/** The Grafana dashboard and the Prometheus rules under {@code src-docker/}, read for the tests. */
final class MonitoringFiles {
  private MonitoringFiles() {}

  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final Path DASHBOARD = ROOT.resolve("src-docker/grafana/outbox-relay.json");
  static final Path RULES = ROOT.resolve("src-docker/prometheus/outbox-alerts.yml");
  static final Path RULE_TESTS = ROOT.resolve("src-docker/prometheus/outbox-alerts.test.yml");
  static final Path PROMTOOL = Path.of("/usr/bin/promtool");
  private static final Pattern METRIC = Pattern.compile("\\boutbox_[a-z0-9_]+");

  /** Every PromQL expression of the dashboard's panels and variables. */
  static List<String> dashboardExpressions() throws IOException {
    JsonNode dash = new ObjectMapper().readTree(DASHBOARD.toFile());
    List<String> exprs = new java.util.ArrayList<>();
    for (JsonNode panel : dash.path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        exprs.add(target.path("expr").asText());
      }
    }
    for (JsonNode variable : dash.path("templating").path("list")) {
      if (variable.has("definition")) {
        exprs.add(variable.path("definition").asText());
      }
    }
    return exprs;
  }

  /** The alert rules as YAML maps ({@code alert, expr, labels, annotations, ...}). */
  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> alertRules() throws IOException {
    try (InputStream in = Files.newInputStream(RULES)) {
      Map<String, Object> doc = new Yaml().load(in);
      List<Map<String, Object>> rules = new java.util.ArrayList<>();
      for (Map<String, Object> group : (List<Map<String, Object>>) doc.get("groups")) {
        rules.addAll((List<Map<String, Object>>) group.get("rules"));
      }
      return rules;
    }
  }

  /**
   * The relay metric names (samples, e.g. {@code outbox_delivery_seconds_bucket}) the dashboard and
   * rules use.
   */
  static Set<String> metricNamesUsed() throws IOException {
    Set<String> names = new TreeSet<>();
    for (String e : dashboardExpressions()) {
      names.addAll(metrics(e));
    }
    for (Map<String, Object> rule : alertRules()) {
      names.addAll(metrics(String.valueOf(rule.get("expr"))));
    }
    return names;
  }

  static Set<String> metrics(String expression) {
    Set<String> names = new TreeSet<>();
    Matcher m = METRIC.matcher(expression);
    while (m.find()) {
      names.add(m.group());
    }
    return names;
  }
}
