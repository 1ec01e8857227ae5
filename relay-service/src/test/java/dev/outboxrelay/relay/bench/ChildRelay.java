package dev.outboxrelay.relay.bench;

import dev.outboxrelay.relay.sink.HttpSink;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator's handle on a {@link RelayChild}: this JVM's classpath, {@value #HEAP} of heap
 * (as the project runs relay processes in its tests) and the image's {@value #YOUNG_GEN_FLAG}, the
 * {@code outbox.*} system properties passed on, then the JVM options of {@value
 * #JAVA_OPTS_VARIABLE} (space-separated, e.g. a GC setting to measure), stderr to a log file.
 */
public final class ChildRelay implements AutoCloseable {
  static final String HEAP = "256m";

  /**
   * As {@code relay-service.Dockerfile}'s {@code JAVA_OPTS} (docs/deployment.md, "JVM options").
   */
  public static final String YOUNG_GEN_FLAG = "-XX:MaxNewSize=64m";

  /** The environment variable whose JVM options the relay children get after the heap. */
  static final String JAVA_OPTS_VARIABLE = "BENCH_CHILD_JAVA_OPTS";

  private final Process process;
  private final Writer stdin;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final Path idsFile;
  private final Path log;

  private ChildRelay(Process process, Path idsFile, Path log) {
    this.process = process;
    this.idsFile = idsFile;
    this.log = log;
    this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  lines.add(line);
                }
              } catch (IOException e) {
                lines.add("EOF " + e);
              }
              lines.add("EOF");
            },
            "bench-child-" + process.pid());
    reader.setDaemon(true);
    reader.start();
  }

  static ChildRelay launch(String name, String url, String user, Path dir) throws IOException {
    Files.createDirectories(dir);
    Path ids = dir.resolve(name + ".ids");
    Path log = dir.resolve(name + ".log");
    Files.deleteIfExists(ids);
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx" + HEAP);
    cmd.add(HttpSink.COMMON_POOL_FLAG);
    cmd.add(YOUNG_GEN_FLAG);
    String extra = System.getenv(JAVA_OPTS_VARIABLE);
    if (extra != null && !extra.isBlank()) {
      cmd.addAll(List.of(extra.trim().split("\\s+")));
    }
    for (Map.Entry<Object, Object> p : System.getProperties().entrySet()) {
      if (String.valueOf(p.getKey()).startsWith("outbox.")) {
        cmd.add("-D" + p.getKey() + "=" + p.getValue());
      }
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(Bench.class.getName());
    cmd.addAll(
        List.of(
            "--role", "relay", "--jdbc-url", url, "--user", user, "--ids-file", ids.toString()));
    Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    return new ChildRelay(p, ids, log);
  }

  long pid() {
    return process.pid();
  }

  void send(String command) throws IOException {
    stdin.write(command + "\n");
    stdin.flush();
  }

  /** The next line starting with {@code prefix}; fails when the child ends or the time is up. */
  String await(String prefix, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (line == null || line.startsWith("EOF")) {
        throw new IllegalStateException(
            "relay child "
                + pid()
                + " gave no '"
                + prefix
                + "' within "
                + timeout
                + (line == null ? "" : " (it ended)")
                + "; see "
                + log);
      }
      if (line.startsWith(prefix)) {
        return line;
      }
    }
  }

  /** The value of {@code key=value} in a status line. */
  static double field(String line, String key) {
    for (String part : line.split(" ")) {
      if (part.startsWith(key + "=")) {
        return Double.parseDouble(part.substring(key.length() + 1));
      }
    }
    throw new IllegalStateException("no " + key + " in '" + line + "'");
  }

  /** Every id the child's sink received, repeats included (after STOPPED). */
  List<Long> receivedIds() throws IOException {
    List<Long> ids = new ArrayList<>();
    for (String l : Files.readAllLines(idsFile)) {
      if (!l.isBlank()) {
        ids.add(Long.parseLong(l.trim()));
      }
    }
    return ids;
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }
}
