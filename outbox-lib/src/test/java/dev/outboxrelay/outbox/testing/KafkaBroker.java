package dev.outboxrelay.outbox.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A real single-node Kafka broker in KRaft mode (broker and controller in one process), run from
 * Maven Central's Kafka jars with {@code kafka.Kafka}, on free loopback ports. The test classpath
 * comes from {@code target/test-classpath.txt} (written by the build). {@link #stop()} kills it;
 * {@link #start()} brings the same node back on the same ports and data. {@link #shared()} is the
 * one broker of a test JVM.
 */
public final class KafkaBroker implements AutoCloseable {
  private static KafkaBroker shared;

  private final Path dir;
  private final int port = ServiceProcess.freePort();
  private final int controllerPort = ServiceProcess.freePort();
  private volatile Process process;

  private KafkaBroker(Path dir) {
    this.dir = dir;
  }

  /** Formats a fresh node under {@code dir} and starts it; returns when it answers. */
  public static KafkaBroker startFresh(Path dir) throws Exception {
    KafkaBroker b = new KafkaBroker(dir.toAbsolutePath());
    b.format();
    b.start();
    return b;
  }

  /**
   * The broker of this test JVM, formatted and started on first use (under {@code
   * target/kafka-shared}) and killed when the JVM exits: a KRaft node's format and start cost more
   * than most of the tests that need one, so the test classes of a module share it, each on topics
   * of its own. A test may {@link #stop()} and {@link #start()} it (an outage); a test that failed
   * in between leaves it down, so each call starts it again unless it runs. Never close it.
   */
  public static synchronized KafkaBroker shared() throws Exception {
    if (shared == null) {
      KafkaBroker b = startFresh(Path.of("target", "kafka-shared"));
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    Process p = b.process;
                    if (p != null) {
                      p.destroyForcibly();
                    }
                  },
                  "kafka-shared-stop"));
      shared = b;
    } else {
      shared.startUnlessRunning();
    }
    return shared;
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  private void format() throws Exception {
    if (Files.exists(dir)) {
      try (var paths = Files.walk(dir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    Files.createDirectories(dir.resolve("data"));
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put(
        "listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("log.dirs", dir.resolve("data").toString());
    p.put("num.partitions", "3");
    p.put("offsets.topic.replication.factor", "1");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("auto.create.topics.enable", "true");
    try (var out = Files.newBufferedWriter(dir.resolve("server.properties"))) {
      p.store(out, "single-node KRaft broker for tests");
    }
    Process f =
        java(
                "kafka.tools.StorageTool",
                "format",
                "-t",
                randomClusterId(),
                "-c",
                dir.resolve("server.properties").toString())
            .start();
    if (!f.waitFor(120, TimeUnit.SECONDS) || f.exitValue() != 0) {
      throw new IllegalStateException("kafka storage format failed:\n" + log());
    }
  }

  /** Starts (or restarts) the node and waits until it serves requests. */
  public void start() throws Exception {
    process = java("kafka.Kafka", dir.resolve("server.properties").toString()).start();
    Properties admin = adminSettings();
    try {
      await("kafka serving requests")
          .atMost(Duration.ofSeconds(120))
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                if (!process.isAlive()) {
                  throw new IllegalStateException(
                      "kafka exited with " + process.exitValue() + ":\n" + log());
                }
                if (!listening()) {
                  return false;
                }
                try (Admin a = Admin.create(admin)) {
                  a.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                  return true;
                } catch (Exception notYet) {
                  return false; // the controller may still be electing itself
                }
              });
    } catch (ConditionTimeoutException e) {
      throw new IllegalStateException("kafka not ready after 120s:\n" + log(), e);
    }
  }

  /**
   * Creates {@code topic} with the broker's default partition count and waits until its leaders are
   * elected, so that a test's first send does not pay for auto-creation (on a loaded machine that
   * can take longer than a short request timeout, and a timed-out send is rightly retried).
   */
  public void createTopic(String topic) throws Exception {
    try (Admin a = Admin.create(adminSettings())) {
      a.createTopics(List.of(new NewTopic(topic, Optional.empty(), Optional.empty())))
          .all()
          .get(30, TimeUnit.SECONDS);
      try {
        await("leaders of topic " + topic)
            .atMost(Duration.ofSeconds(30))
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(100))
            .until(() -> hasLeaders(a, topic));
      } catch (ConditionTimeoutException e) {
        throw new IllegalStateException(
            "topic " + topic + " has no leader after 30s:\n" + log(), e);
      }
    }
  }

  /**
   * True when every partition of {@code topic} has a leader; false while the broker does not know
   * the topic yet (right after its creation the metadata can lag: UnknownTopicOrPartition).
   */
  private static boolean hasLeaders(Admin a, String topic) throws Exception {
    try {
      return a
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get(10, TimeUnit.SECONDS)
          .get(topic)
          .partitions()
          .stream()
          .noneMatch(p -> p.leader() == null || p.leader().isEmpty());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return false;
      }
      throw e;
    }
  }

  private Properties adminSettings() {
    Properties admin = new Properties();
    admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    admin.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
    admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
    return admin;
  }

  private boolean listening() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * {@link #start()} unless the node is up (a test that stopped it may have failed before
   * restarting it).
   */
  public void startUnlessRunning() throws Exception {
    if (process == null || !process.isAlive()) {
      start();
    }
  }

  /** SIGKILL: the broker disappears at once (its data stays for {@link #start()}). */
  public void stop() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      process.waitFor();
    }
  }

  private ProcessBuilder java(String mainClass, String... args) throws IOException {
    List<String> cmd =
        new java.util.ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m",
                "-cp",
                ServiceProcess.testClasspath(),
                mainClass));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("kafka.log").toFile()));
  }

  private String log() throws IOException {
    List<String> lines = Files.readAllLines(dir.resolve("kafka.log"));
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
  }

  /**
   * A Kafka cluster id: 16 random bytes, URL-safe base64 without padding, never starting with
   * {@code -} (kafka-storage's argument parser would read such an id as an option; about one id in
   * 64 did, and the broker then failed to format).
   */
  private static String randomClusterId() {
    while (true) {
      UUID u = UUID.randomUUID();
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16);
      b.putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits());
      String id = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
      if (!id.startsWith("-")) {
        return id;
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }
}
