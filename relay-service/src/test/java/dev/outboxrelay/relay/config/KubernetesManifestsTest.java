package dev.outboxrelay.relay.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.outboxrelay.relay.bench.ChildRelay;
import dev.outboxrelay.relay.sink.HttpSink;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * src-docker/k8s/ runs the relay on Kubernetes; no cluster checks it here (no kubectl, no
 * kubeconform offline). This test reads the manifests as kustomize would list them and holds them
 * against the relay: its HTTP port and health paths, every environment variable against a key the
 * relay reads ({@link RelayKeys}), the settings resolved as SmallRye would at run time, the
 * termination grace period against {@code outbox.relay.shutdown-grace}, replicas, the disruption
 * budget's selector and the memory the JVM may take. {@code RelayStartupIT} requests the probe
 * paths from the running relay.
 */
class KubernetesManifestsTest {
  static final Path K8S = RelayKeys.ROOT.resolve("src-docker/k8s");
  static final Path DOCKERFILE = RelayKeys.ROOT.resolve("src-docker/relay-service.Dockerfile");
  static final Path COMPOSE = RelayKeys.ROOT.resolve("src-docker/compose.yaml");

  /** The heap the relay runs with in this project's process tests and benchmarks. */
  static final long TESTED_HEAP = 256L << 20;

  /**
   * Room outside the heap: metaspace, code cache, thread stacks, direct buffers. The benchmark's
   * relay peaked at 305 MB RSS with 166 MB of heap used (docs/performance.md "Performance"): about
   * 140 MB.
   */
  static final long NON_HEAP_ROOM = 192L << 20;

  static RelayKeys keys;
  static Map<String, Object> kustomization;

  /** Every resource listed in kustomization.yaml, by kind. */
  static Map<String, Map<String, Object>> byKind = new TreeMap<>();

  @BeforeAll
  static void read() throws IOException {
    keys = RelayKeys.load();
    byKind.clear();
    kustomization = load(K8S.resolve("kustomization.yaml"));
    for (Object file : list(kustomization.get("resources"), "kustomization.resources")) {
      Map<String, Object> resource = load(K8S.resolve(String.valueOf(file)));
      String kind = String.valueOf(resource.get("kind"));
      assertTrue(byKind.put(kind, resource) == null, "two resources of kind " + kind);
    }
  }

  @Test
  void kustomizationListsEveryManifestAndTheRelayKinds() throws IOException {
    List<String> files;
    try (Stream<Path> s = Files.list(K8S)) {
      files =
          s.map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith(".yaml") && !n.equals("kustomization.yaml"))
              .sorted()
              .toList();
    }
    assertEquals(
        files,
        list(kustomization.get("resources"), "resources").stream()
            .map(String::valueOf)
            .sorted()
            .toList(),
        "kustomization.yaml resources");
    assertEquals(
        List.of("ConfigMap", "Deployment", "PodDisruptionBudget", "Secret", "Service"),
        List.copyOf(byKind.keySet()));
  }

  @Test
  void deploymentRunsTwoReplicasOfTheComposeImageAsTheDockerfileUser() throws IOException {
    Map<String, Object> spec = map(byKind.get("Deployment"), "spec");
    assertEquals(2, spec.get("replicas"), "Deployment spec.replicas");
    Map<String, Object> compose = load(COMPOSE);
    Object composeImage = map(map(compose, "services"), "relay-service").get("image");
    assertEquals(composeImage, container().get("image"), "the image compose.yaml builds");
    String repository = String.valueOf(composeImage).replaceFirst(":[^:/]+$", "");
    assertTrue(
        list(kustomization.get("images"), "images").stream()
            .anyMatch(i -> repository.equals(((Map<?, ?>) i).get("name"))),
        "kustomization images name " + repository);
    Matcher user = Pattern.compile("(?m)^USER (\\d+)$").matcher(Files.readString(DOCKERFILE));
    assertTrue(user.find(), "relay-service.Dockerfile USER");
    Map<String, Object> security = map(podSpec(), "securityContext");
    assertEquals(Integer.parseInt(user.group(1)), security.get("runAsUser"));
    assertEquals(true, security.get("runAsNonRoot"));
  }

  @Test
  void portsAndProbesAreTheRelays() {
    int port = Integer.parseInt(keys.relayProperties().getProperty("quarkus.http.port"));
    List<Object> ports = list(container().get("ports"), "container ports");
    assertEquals(1, ports.size(), "container ports");
    Map<String, Object> containerPort = cast(ports.get(0), "container port");
    assertEquals(port, containerPort.get("containerPort"), "containerPort = quarkus.http.port");
    String portName = String.valueOf(containerPort.get("name"));

    Map<String, String> probes = probePaths();
    assertEquals(
        Map.of(
            "livenessProbe",
            "/q/health/live",
            "readinessProbe",
            "/q/health/ready",
            "startupProbe",
            "/q/health/live"),
        probes);
    for (String probe : probes.keySet()) {
      Object probePort = map(map(container(), probe), "httpGet").get("port");
      assertTrue(
          portName.equals(probePort) || Integer.valueOf(port).equals(probePort),
          probe + " port " + probePort + " is not the relay's " + portName + "/" + port);
    }
    // The paths are SmallRye Health's defaults: nothing in the relay moves them.
    List<String> moved =
        keys.relayProperties().stringPropertyNames().stream()
            .filter(
                k ->
                    k.startsWith("quarkus.smallrye-health.")
                        || k.contains("non-application-root-path")
                        || k.equals("quarkus.http.root-path"))
            .toList();
    assertEquals(List.of(), moved, "keys that move /q/health/*");
    assertFalse(
        env().containsKey("QUARKUS_HTTP_PORT"), "the port is the application's, not overridden");

    Map<String, Object> service = map(byKind.get("Service"), "spec");
    Map<String, Object> servicePort =
        cast(list(service.get("ports"), "Service ports").get(0), "Service port");
    assertEquals(port, servicePort.get("port"));
    assertEquals(portName, servicePort.get("targetPort"));
  }

  @Test
  void everyVariableIsAKeyTheRelayReads() throws IOException {
    Map<String, Object> container = container();
    assertEquals(
        List.of("relay-service-config", "relay-service-secrets"),
        list(container.get("envFrom"), "envFrom").stream()
            .map(
                e -> {
                  Map<String, Object> from = cast(e, "envFrom");
                  Map<String, Object> ref =
                      from.containsKey("configMapRef")
                          ? map(from, "configMapRef")
                          : map(from, "secretRef");
                  return String.valueOf(ref.get("name"));
                })
            .toList(),
        "envFrom refers to the ConfigMap and the Secret");
    assertEquals("relay-service-config", map(byKind.get("ConfigMap"), "metadata").get("name"));
    assertEquals("relay-service-secrets", map(byKind.get("Secret"), "metadata").get("name"));

    List<String> names = new ArrayList<>(env().keySet());
    // JAVA_OPTS is read by the image's entrypoint, not by the relay.
    names.remove("JAVA_OPTS");
    assertTrue(
        Files.readString(DOCKERFILE).contains("$JAVA_OPTS"), "the entrypoint reads JAVA_OPTS");
    assertEquals(List.of(), keys.unknown(names), "variables that match no key of the relay");

    // Credentials only in the Secret.
    for (String name : map(byKind.get("ConfigMap"), "data").keySet()) {
      assertFalse(
          name.matches(".*(PASSWORD|SECRET)|QUARKUS_SECURITY_USERS_EMBEDDED_USERS_.*"),
          name + " belongs in the Secret");
    }
    RelayConfig relay = RelayKeys.resolve(env());
    String datasource =
        relay
            .relay()
            .datasource()
            .orElseThrow(() -> new AssertionError("OUTBOX_RELAY_DATASOURCE is not set"));
    assertTrue(keys.datasources().contains(datasource), datasource + " is declared by the relay");
    for (String k : RelayKeys.DATASOURCE_KEYS) {
      String name = RelayKeys.envName("quarkus.datasource." + datasource + "." + k);
      assertTrue(env().containsKey(name), name + " is set");
    }
    assertEquals("http", relay.destinations().get("billing").type().orElseThrow());
    assertTrue(relay.destinations().get("billing").hmacSecret().isPresent(), "billing is signed");
  }

  @Test
  void podsOutliveTheRelaysShutdownGrace() {
    Duration configured = RelayKeys.resolve(env()).relay().shutdownGrace();
    Duration byDefault = RelayKeys.resolve(Map.of()).relay().shutdownGrace();
    Duration preStop = Duration.ofSeconds(preStopSleepSeconds());
    Duration termination =
        Duration.ofSeconds(((Number) podSpec().get("terminationGracePeriodSeconds")).longValue());
    // The preStop hook runs inside the termination grace period, before SIGTERM.
    for (Duration grace : List.of(configured, byDefault)) {
      assertTrue(
          termination.compareTo(preStop.plus(grace)) > 0,
          "terminationGracePeriodSeconds "
              + termination.toSeconds()
              + "s must exceed preStop "
              + preStop.toSeconds()
              + "s + outbox.relay.shutdown-grace "
              + grace.toSeconds()
              + "s");
    }
    assertTrue(
        preStop.compareTo(Duration.ZERO) > 0, "a preStop sleep lets the endpoints update first");
  }

  @Test
  void disruptionBudgetAndServiceSelectTheRelayPods() {
    Map<String, Object> deployment = map(byKind.get("Deployment"), "spec");
    Map<String, Object> podLabels = map(map(deployment, "template"), "metadata");
    podLabels = map(podLabels, "labels");
    Map<String, Object> selector = map(map(deployment, "selector"), "matchLabels");
    assertSubset(selector, podLabels, "Deployment selector");

    Map<String, Object> pdb = map(byKind.get("PodDisruptionBudget"), "spec");
    assertEquals(1, pdb.get("minAvailable"), "PodDisruptionBudget minAvailable");
    assertEquals(
        selector, map(map(pdb, "selector"), "matchLabels"), "PDB selector = Deployment selector");
    assertSubset(
        map(map(byKind.get("Service"), "spec"), "selector"), podLabels, "Service selector");
  }

  @Test
  void requestsAndAMemoryLimitTheHeapFitsIn() {
    Map<String, Object> resources = map(container(), "resources");
    Map<String, Object> requests = map(resources, "requests");
    assertNotNull(requests.get("cpu"), "cpu request");
    assertNotNull(requests.get("memory"), "memory request");
    long limit = bytes(map(resources, "limits").get("memory"));
    assertTrue(bytes(requests.get("memory")) <= limit, "memory request within the limit");

    String javaOpts = env().get("JAVA_OPTS");
    assertNotNull(javaOpts, "JAVA_OPTS sizes the heap for the limit");
    Matcher pct = Pattern.compile("-XX:MaxRAMPercentage=(\\d+(?:\\.\\d+)?)").matcher(javaOpts);
    assertTrue(pct.find(), "JAVA_OPTS sets -XX:MaxRAMPercentage: " + javaOpts);
    long heap = (long) (limit * Double.parseDouble(pct.group(1)) / 100);
    assertTrue(
        heap >= TESTED_HEAP,
        "max heap " + (heap >> 20) + "Mi is below the tested " + (TESTED_HEAP >> 20) + "Mi");
    assertTrue(
        limit - heap >= NON_HEAP_ROOM, "only " + ((limit - heap) >> 20) + "Mi outside the heap");
    // The image's other JVM flags stay (JAVA_OPTS replaces the image's default as a whole).
    Matcher dockerOpts = Pattern.compile("JAVA_OPTS=\"([^\"]*)\"").matcher(readDockerfile());
    assertTrue(dockerOpts.find(), "relay-service.Dockerfile sets JAVA_OPTS");
    assertTrue(
        dockerOpts.group(1).contains(HttpSink.COMMON_POOL_FLAG),
        "the image keeps the JDK HTTP client from starting a thread per answer: "
            + HttpSink.COMMON_POOL_FLAG);
    // The 3-relay drain's RSS figure is only the image's if bin/bench's relay processes run with
    // the image's young-generation bound.
    assertTrue(
        dockerOpts.group(1).contains(ChildRelay.YOUNG_GEN_FLAG),
        "the image's JAVA_OPTS hold bin/bench's " + ChildRelay.YOUNG_GEN_FLAG);
    for (String flag : dockerOpts.group(1).split("\\s+")) {
      if (!flag.startsWith("-XX:MaxRAMPercentage=")) {
        assertTrue(javaOpts.contains(flag), "JAVA_OPTS keeps the image's " + flag);
      }
    }
  }

  /** The probes' HTTP paths by probe, as the Deployment declares them. */
  static Map<String, String> probePaths() {
    Map<String, String> paths = new TreeMap<>();
    for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
      Object p = container().get(probe);
      if (p != null) {
        paths.put(probe, String.valueOf(map(cast(p, probe), "httpGet").get("path")));
      }
    }
    return paths;
  }

  /**
   * The relay container's environment as the pod gets it: the ConfigMap, then the Secret (envFrom
   * in order), then {@code env} values; a {@code valueFrom} is resolved from those two.
   */
  static Map<String, String> env() {
    Map<String, String> env = new LinkedHashMap<>();
    map(byKind.get("ConfigMap"), "data").forEach((k, v) -> env.put(k, String.valueOf(v)));
    map(byKind.get("Secret"), "stringData").forEach((k, v) -> env.put(k, String.valueOf(v)));
    Object declared = container().get("env");
    for (Object o : declared == null ? List.of() : list(declared, "env")) {
      Map<String, Object> e = cast(o, "env");
      String name = String.valueOf(e.get("name"));
      if (e.containsKey("value")) {
        env.put(name, String.valueOf(e.get("value")));
      } else {
        fail(name + ": only literal values are expected in env (use the ConfigMap or the Secret)");
      }
    }
    return env;
  }

  static Map<String, Object> podSpec() {
    return map(map(map(byKind.get("Deployment"), "spec"), "template"), "spec");
  }

  static Map<String, Object> container() {
    List<Object> containers = list(podSpec().get("containers"), "containers");
    assertEquals(1, containers.size(), "one container");
    return cast(containers.get(0), "container");
  }

  static long preStopSleepSeconds() {
    Map<String, Object> exec = map(map(map(container(), "lifecycle"), "preStop"), "exec");
    List<Object> command = list(exec.get("command"), "preStop command");
    assertEquals("sleep", command.get(0), "preStop sleeps");
    return Long.parseLong(String.valueOf(command.get(1)));
  }

  /** A Kubernetes memory quantity ({@code 512Mi}, {@code 1Gi}, {@code 536870912}) in bytes. */
  static long bytes(Object quantity) {
    Matcher m = Pattern.compile("(\\d+)(Ki|Mi|Gi)?").matcher(String.valueOf(quantity));
    assertTrue(m.matches(), "memory quantity " + quantity);
    int shift =
        m.group(2) == null
            ? 0
            : switch (m.group(2)) {
              case "Ki" -> 10;
              case "Mi" -> 20;
              default -> 30;
            };
    return Long.parseLong(m.group(1)) << shift;
  }

  private static String readDockerfile() {
    try {
      return Files.readString(DOCKERFILE);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static void assertSubset(
      Map<String, Object> selector, Map<String, Object> labels, String what) {
    assertFalse(selector.isEmpty(), what + " is empty");
    selector.forEach((k, v) -> assertEquals(v, labels.get(k), what + " " + k + " on the pods"));
  }

  static Map<String, Object> load(Path file) throws IOException {
    try (Reader r = Files.newBufferedReader(file)) {
      return cast(new Yaml().load(r), file.toString());
    }
  }

  static Map<String, Object> map(Map<String, Object> parent, String key) {
    return cast(parent.get(key), key);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> cast(Object value, String what) {
    assertTrue(value instanceof Map, what + " is not a mapping: " + value);
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  static List<Object> list(Object value, String what) {
    assertTrue(value instanceof List, what + " is not a list: " + value);
    return (List<Object>) value;
  }
}
