package dev.outboxrelay.relay.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged relay ({@code java -jar quarkus-run.jar}) started as operators start it, on a
 * private in-memory H2 database: plain-text logs by default and JSON lines with the one switch
 * README documents; the Kubernetes probe paths answer; a misspelt {@code outbox.*} key, or a
 * hostile {@code outbox.table} / {@code outbox.schema}, stops start-up naming the key; a misspelt
 * {@code OUTBOX_*} variable is named in a warning.
 */
class RelayStartupIT {
  static final Path LOGS = Path.of("target", "relay-startup-it").toAbsolutePath();
  static final ObjectMapper JSON = new ObjectMapper();
  static final Duration START = Duration.ofSeconds(90);

  @BeforeAll
  static void readManifests() throws IOException {
    KubernetesManifestsTest.read();
  }

  @Test
  void logsArePlainTextByDefaultAndTheKubernetesProbePathsAnswer() throws Exception {
    try (ServiceProcess relay =
        ServiceProcess.start(
            "plain", jar(), ServiceProcess.freePort(), properties("plain"), LOGS)) {
      String started = line(relay, "started in");
      assertTrue(
          started.matches("^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d,\\d+ INFO .*"), started);
      Map<String, String> probes = KubernetesManifestsTest.probePaths();
      assertEquals(3, probes.size(), "startup, liveness and readiness probes: " + probes);
      for (Map.Entry<String, String> probe : probes.entrySet()) {
        assertEquals(
            200, relay.get(probe.getValue()).statusCode(), probe.getKey() + " " + probe.getValue());
      }
    }
  }

  @Test
  void logsAreJsonLinesWithTheSwitchAndAMisspeltVariableIsNamed() throws Exception {
    Map<String, String> env =
        Map.of("QUARKUS_LOG_CONSOLE_JSON_ENABLED", "true", "OUTBOX_RELAY_BATCH_SISE", "5");
    try (ServiceProcess relay =
        ServiceProcess.start(
            "json", jar(), ServiceProcess.freePort(), properties("json"), env, LOGS)) {
      List<JsonNode> records = new ArrayList<>();
      for (String l : logLines(relay)) {
        records.add(JSON.readTree(l)); // every line is one JSON object
      }
      JsonNode started =
          records.stream()
              .filter(r -> r.path("message").asText().contains("started in"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no start-up record in\n" + relay.tail()));
      for (String field : List.of("timestamp", "level", "loggerName", "message")) {
        assertTrue(started.hasNonNull(field), field + " in " + started);
      }
      assertEquals("INFO", started.get("level").asText());
      assertEquals("io.quarkus", started.get("loggerName").asText());
      JsonNode warning =
          records.stream()
              .filter(r -> r.path("message").asText().contains("OUTBOX_RELAY_BATCH_SISE"))
              .findFirst()
              .orElseThrow(
                  () ->
                      new AssertionError(
                          "no warning about OUTBOX_RELAY_BATCH_SISE\n" + relay.tail()));
      assertEquals("WARN", warning.get("level").asText());
      assertEquals(UnknownVariableCheck.class.getName(), warning.get("loggerName").asText());
      assertTrue(
          warning.get("message").asText().contains("did you mean OUTBOX_RELAY_BATCH_SIZE"),
          warning.toString());
    }
  }

  @Test
  void aMisspeltKeyStopsStartUpNamingIt() throws Exception {
    assertStartUpFails("batch-sise", "outbox.relay.batch-sise", "5");
  }

  @Test
  void aMisspeltKeyUnderADestinationStopsStartUpNamingIt() throws Exception {
    assertStartUpFails("tpye", "outbox.destinations.billing.tpye", "http");
  }

  /**
   * Hostile table and schema names ({@code outbox.table}, {@code outbox.schema}) stop start-up
   * before any SQL runs, naming the key, the value and the rule.
   */
  @Test
  void aHostileTableOrSchemaNameStopsStartUpNamingIt() throws Exception {
    assertStartUpFails(
        "hostile-table",
        "outbox.table",
        "x;drop table y",
        "outbox.table='x;drop table y' is rejected: it must be a plain identifier ([a-z_][a-z0-9_]*");
    assertStartUpFails(
        "hostile-schema",
        "outbox.schema",
        "public\"--",
        "outbox.schema='public\"--' is rejected: it must be a plain identifier ([a-z_][a-z0-9_]*");
  }

  private static void assertStartUpFails(String name, String key, String value) throws Exception {
    assertStartUpFails(
        name,
        key,
        value,
        "SRCFG00050: " + key + " in SysPropConfigSource does not map to any root");
  }

  private static void assertStartUpFails(String name, String key, String value, String message)
      throws Exception {
    Map<String, String> p = properties(name);
    p.put(key, value);
    try (ServiceProcess relay =
        ServiceProcess.launch(name, jar(), ServiceProcess.freePort(), p, LOGS)) {
      int exit = relay.awaitExit(START);
      assertNotEquals(0, exit, "exit code");
      String log = relay.logText();
      assertTrue(log.contains(message), "the failure names " + key + ":\n" + relay.tail());
      assertTrue(!log.contains("started in"), "the relay did not start");
    }
  }

  /** The log lines the relay wrote (the command line ServiceProcess writes first excluded). */
  private static List<String> logLines(ServiceProcess relay) throws IOException {
    return relay.logText().lines().filter(l -> !l.isBlank() && !l.startsWith("=== ")).toList();
  }

  private static String line(ServiceProcess relay, String needle) throws IOException {
    return logLines(relay).stream()
        .filter(l -> l.contains(needle))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no line with '" + needle + "' in\n" + relay.tail()));
  }

  /** A relay of its own: an in-memory H2 database named after the test, nothing else to reach. */
  private static Map<String, String> properties(String name) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put(
        "quarkus.datasource.h2.jdbc.url",
        "jdbc:h2:mem:relay-startup-" + name + ";DB_CLOSE_DELAY=-1");
    p.put("outbox.reconciliation.enabled", "false");
    p.put("outbox.retention.enabled", "false");
    return p;
  }

  private static Path jar() {
    return ServiceProcess.moduleJar("relay-service");
  }
}
