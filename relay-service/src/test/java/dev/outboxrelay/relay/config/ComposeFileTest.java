package dev.outboxrelay.relay.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.Reader;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * src-docker/compose.yaml wires the services by environment variables, which nothing checks at
 * build time: a misspelt name is silently ignored by the relay. This test reads the compose file
 * and holds every variable given to the relay against the relay's real configuration (the {@link
 * RelayConfig} mapping, resolved by SmallRye Config as at run time, and application.properties, see
 * {@link RelayKeys}), and the ports, health paths and replicas against the services' properties and
 * Dockerfiles. {@code docker compose config} (in .ci/run, where a compose CLI exists) checks the
 * syntax.
 */
class ComposeFileTest {
  static final Path ROOT = RelayKeys.ROOT;
  static final Path COMPOSE = ROOT.resolve("src-docker/compose.yaml");
  static final String READY = "/q/health/ready";

  /** {@code ${NAME:-default}} in a compose value. */
  static final Pattern INTERPOLATION = Pattern.compile("\\$\\{([A-Za-z0-9_]+):-([^}]*)}");

  static Map<String, Object> services;
  static RelayKeys relayKeys;
  static Properties relayProperties;
  static Properties demoProperties;

  @BeforeAll
  static void read() throws IOException {
    try (Reader r = Files.newBufferedReader(COMPOSE)) {
      Map<String, Object> compose = new Yaml().load(r);
      services = map(compose.get("services"), "services");
    }
    relayKeys = RelayKeys.load();
    relayProperties = relayKeys.relayProperties();
    demoProperties =
        RelayKeys.properties(ROOT.resolve("demo-orders/src/main/resources/application.properties"));
  }

  @Test
  void relayRunsTwoReplicasOnItsPortWithItsReadinessCheck() throws IOException {
    Map<String, Object> relay = service("relay-service");
    assertEquals(
        2,
        map(relay.get("deploy"), "relay-service.deploy").get("replicas"),
        "relay-service.deploy.replicas");
    checkPortAndHealth("relay-service", relay, relayProperties, "relay-service.Dockerfile");
  }

  @Test
  void demoRunsOnItsPortWithItsReadinessCheck() throws IOException {
    checkPortAndHealth(
        "demo-orders", service("demo-orders"), demoProperties, "demo-orders.Dockerfile");
  }

  @Test
  void everyRelayVariableIsAKeyTheRelayReads() {
    Map<String, String> env = environment("relay-service");
    List<String> unknown = relayKeys.unknown(env.keySet());
    assertEquals(List.of(), unknown, "variables of relay-service that match no relay key");
    assertTrue(
        relayProperties.getProperty("quarkus.security.users.embedded.enabled", "").equals("true"),
        "the relay's users come from its configuration");
  }

  @Test
  void relayResolvesTheDestinationsFromTheEnvironmentAsCompose() {
    Map<String, String> env = environment("relay-service");
    RelayConfig relay = RelayKeys.resolve(env);
    assertEquals(Set.of("billing", "orders", "emails"), relay.destinations().keySet());

    RelayConfig.Destination billing = relay.destinations().get("billing");
    int demoPort = Integer.parseInt(demoProperties.getProperty("quarkus.http.port"));
    assertEquals("http", billing.type().orElseThrow());
    assertEquals(
        Optional.of(URI.create("http://demo-orders:" + demoPort + "/sink/billing")), billing.url());
    assertEquals("http-ledger", billing.confirmation().type());
    assertEquals(
        Optional.of(URI.create("http://demo-orders:" + demoPort + "/ledger")),
        billing.confirmation().url());
    // The relay signs with the secret the demo sink verifies.
    assertEquals(
        environment("demo-orders").get("DEMO_SINK_HMAC_SECRET"), billing.hmacSecret().orElse(null));
    assertEquals("kafka", relay.destinations().get("orders").type().orElseThrow());
    assertEquals(Optional.of("orders.events"), relay.destinations().get("orders").topic());
    assertEquals("rabbitmq", relay.destinations().get("emails").type().orElseThrow());
    assertEquals(Optional.of("emails.send"), relay.destinations().get("emails").routingKey());
    assertEquals(Optional.of("sqlserver"), relay.relay().datasource());
  }

  @Test
  void relayAndDemoShareOneDatabase() {
    Map<String, String> relay = environment("relay-service");
    Map<String, String> demo = environment("demo-orders");
    String url = relay.get("QUARKUS_DATASOURCE_SQLSERVER_JDBC_URL");
    assertTrue(url != null && url.startsWith("jdbc:sqlserver://mssql:1433;"), String.valueOf(url));
    // The transactional outbox: an order and its job commit together only in one database.
    assertEquals(url, demo.get("QUARKUS_DATASOURCE_JDBC_URL"));
    assertEquals(
        relay.get("QUARKUS_DATASOURCE_SQLSERVER_USERNAME"),
        demo.get("QUARKUS_DATASOURCE_USERNAME"));
    assertEquals(
        relay.get("QUARKUS_DATASOURCE_SQLSERVER_PASSWORD"),
        demo.get("QUARKUS_DATASOURCE_PASSWORD"));
    // demo-orders is built for SQL Server, and has migrations for it.
    Map<String, Object> build = map(service("demo-orders").get("build"), "demo-orders.build");
    assertEquals("mssql", map(build.get("args"), "demo-orders.build.args").get("DB_KIND"));
    assertTrue(Files.isDirectory(ROOT.resolve("demo-orders/src/main/resources/db/demo/mssql")));
    for (String app : List.of("relay-service", "demo-orders")) {
      Map<String, Object> dependsOn = map(service(app).get("depends_on"), app + ".depends_on");
      assertEquals(
          "service_completed_successfully",
          map(dependsOn.get("mssql-init"), app + ".depends_on.mssql-init").get("condition"),
          app + " starts once the database exists");
    }
  }

  /**
   * The relay's datasource named by compose must be one the relay declares (a datasource is fixed
   * at build time). Skipped, with the reason, on a relay built without SQL Server support.
   */
  @Test
  void relayDeclaresTheDatasourceComposeUses() {
    Map<String, String> env = environment("relay-service");
    String name = env.get("OUTBOX_RELAY_DATASOURCE");
    assertEquals("sqlserver", name);
    env.keySet().stream()
        .filter(k -> k.startsWith("QUARKUS_DATASOURCE_"))
        .forEach(k -> assertTrue(k.startsWith("QUARKUS_DATASOURCE_SQLSERVER_"), k));
    String kindKey = "quarkus.datasource." + name + ".db-kind";
    assumeTrue(
        relayProperties.containsKey(kindKey),
        "relay-service declares no datasource '"
            + name
            + "' ("
            + kindKey
            + " is not in its application.properties): SQL Server support"
            + " is not in this build of the relay, so compose.yaml cannot run it yet");
    assertEquals("mssql", relayProperties.getProperty(kindKey));
  }

  private static void checkPortAndHealth(
      String name, Map<String, Object> service, Properties properties, String dockerfile)
      throws IOException {
    int port = Integer.parseInt(properties.getProperty("quarkus.http.port"));
    List<?> ports = (List<?>) service.get("ports");
    assertEquals(1, ports.size(), name + ".ports");
    assertTrue(String.valueOf(ports.get(0)).endsWith(":" + port), name + " publishes " + ports);
    Object test = map(service.get("healthcheck"), name + ".healthcheck").get("test");
    assertTrue(
        String.valueOf(test).contains("http://localhost:" + port + READY),
        name + " healthcheck " + test);
    String docker = Files.readString(ROOT.resolve("src-docker").resolve(dockerfile));
    assertTrue(docker.contains("EXPOSE " + port + "\n"), dockerfile + " exposes " + port);
    assertTrue(docker.contains("QUARKUS_HTTP_PORT=" + port), dockerfile + " sets the port");
    assertTrue(
        docker.contains("HEALTHCHECK") && docker.contains(READY), dockerfile + " health check");
    Matcher user = Pattern.compile("(?m)^USER (\\S+)$").matcher(docker);
    assertTrue(user.find(), dockerfile + " sets a USER");
    assertFalse(Set.of("0", "root").contains(user.group(1)), dockerfile + " runs as root");
  }

  /** A service's environment, with each {@code ${VAR:-default}} at its default. */
  static Map<String, String> environment(String service) {
    Map<String, Object> env = map(service(service).get("environment"), service + ".environment");
    Map<String, String> resolved = new TreeMap<>();
    env.forEach(
        (k, v) -> {
          Matcher m = INTERPOLATION.matcher(String.valueOf(v));
          resolved.put(k, m.replaceAll(r -> Matcher.quoteReplacement(r.group(2))));
        });
    return resolved;
  }

  static Map<String, Object> service(String name) {
    return map(services.get(name), "services." + name);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object value, String what) {
    assertTrue(value instanceof Map, what + " is not a mapping in " + COMPOSE + ": " + value);
    return new LinkedHashMap<>((Map<String, Object>) value);
  }
}
