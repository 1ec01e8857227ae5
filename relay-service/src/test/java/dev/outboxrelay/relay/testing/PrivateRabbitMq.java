package dev.outboxrelay.relay.testing;

import static org.awaitility.Awaitility.await;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A RabbitMQ node of the test's own, for faults that must not touch the machine's shared broker
 * (5672): its own node name, AMQP and distribution ports, and database and logs under {@code dir}
 * (in {@code target/}), started from the installed {@code rabbitmq-server} as the test's user, no
 * plugins. {@link #stop()} stops the node (its durable exchanges and queues stay); {@link #start()}
 * brings it back on the same port and data: a broker restart.
 */
public final class PrivateRabbitMq implements AutoCloseable {
  static final Path BIN = Path.of("/usr/lib/rabbitmq/bin");
  private final Path dir;
  private final String node =
      "outbox-it-" + UUID.randomUUID().toString().substring(0, 8) + "@localhost";
  private final int port = ServiceProcess.freePort();
  private final int distributionPort = ServiceProcess.freePort();
  private Process process;

  private PrivateRabbitMq(Path dir) {
    this.dir = dir;
  }

  /** Lays out a fresh node under {@code dir} and starts it; returns when it takes connections. */
  public static PrivateRabbitMq startFresh(Path dir) throws Exception {
    Path abs = dir.toAbsolutePath();
    if (Files.exists(abs)) {
      try (var paths = Files.walk(abs)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    Files.createDirectories(abs.resolve("log"));
    Files.createDirectories(abs.resolve("mnesia"));
    PrivateRabbitMq r = new PrivateRabbitMq(abs);
    Files.writeString(abs.resolve("enabled_plugins"), "[].\n");
    Files.writeString(abs.resolve("rabbitmq-env.conf"), "");
    Files.writeString(abs.resolve("rabbitmq.conf"), "listeners.tcp.default = " + r.port + "\n");
    r.start();
    return r;
  }

  public int port() {
    return port;
  }

  public String node() {
    return node;
  }

  /** Starts (or restarts) the node and waits until it has booted. */
  public void start() throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(BIN.resolve("rabbitmq-server").toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("server.out").toFile()));
    environment(pb.environment());
    process = pb.start();
    // await_startup fails at once until the node has registered with epmd: ask again until then.
    // The bound covers 180 s of asking plus one await_startup that may itself take 180 s.
    AtomicReference<IllegalStateException> lastRefusal = new AtomicReference<>();
    try {
      await("rabbitmq node " + node + " started")
          .atMost(Duration.ofSeconds(360))
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(500))
          .until(
              () -> {
                try {
                  ctl(180, "await_startup", "--timeout", "170");
                  return true;
                } catch (IllegalStateException notYet) {
                  if (!process.isAlive()) {
                    throw notYet;
                  }
                  lastRefusal.set(notYet);
                  return false;
                }
              });
    } catch (ConditionTimeoutException e) {
      throw lastRefusal.get() != null ? lastRefusal.get() : new IllegalStateException(e);
    }
  }

  /** Stops the node (the Erlang VM exits) and waits for it. */
  public void stop() throws Exception {
    if (process != null && process.isAlive()) {
      ctl(120, "stop");
      process.waitFor(60, TimeUnit.SECONDS);
      process.destroyForcibly();
    }
  }

  /** Runs {@code rabbitmqctl} against this node; its output, or an exception with it. */
  public String ctl(int timeoutSeconds, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(BIN.resolve("rabbitmqctl").toString(), "-n", node));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    environment(pb.environment());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(
          "rabbitmqctl " + String.join(" ", args) + " on " + node + ": " + out + "\n" + tail());
    }
    return out;
  }

  private void environment(Map<String, String> env) {
    env.put("RABBITMQ_NODENAME", node);
    env.put("RABBITMQ_NODE_PORT", Integer.toString(port));
    env.put("RABBITMQ_DIST_PORT", Integer.toString(distributionPort));
    env.put("RABBITMQ_MNESIA_BASE", dir.resolve("mnesia").toString());
    env.put("RABBITMQ_LOG_BASE", dir.resolve("log").toString());
    env.put("RABBITMQ_ENABLED_PLUGINS_FILE", dir.resolve("enabled_plugins").toString());
    env.put("RABBITMQ_CONF_ENV_FILE", dir.resolve("rabbitmq-env.conf").toString());
    env.put("RABBITMQ_CONFIG_FILE", dir.resolve("rabbitmq").toString());
    env.put("RABBITMQ_PID_FILE", dir.resolve("node.pid").toString());
    // The Erlang cookie lives in HOME: the node and rabbitmqctl share this one.
    env.put("HOME", dir.toString());
  }

  private String tail() {
    try {
      Path log = dir.resolve("log").resolve(node + ".log");
      if (!Files.exists(log)) {
        log = dir.resolve("server.out");
      }
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() throws Exception {
    try {
      stop();
    } finally {
      if (process != null) {
        process.destroyForcibly();
      }
    }
  }
}
