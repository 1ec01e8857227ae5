package dev.outboxrelay.outbox.testing;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A packaged Quarkus service run as a real OS process ({@code java -jar quarkus-run.jar}), so tests
 * can stop it (SIGTERM), kill it (SIGKILL) or freeze it (SIGSTOP/SIGCONT) like an operator, a crash
 * or a long GC pause would.
 */
public final class ServiceProcess implements AutoCloseable {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (\\S+)");

  private final String name;
  private final Process process;
  private final Path log;
  private final URI baseUri;

  private ServiceProcess(String name, Process process, Path log, URI baseUri) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.baseUri = baseUri;
  }

  /** Starts {@code jar} with system properties and waits until /q/health/ready answers 200. */
  public static ServiceProcess start(
      String name, Path jar, int httpPort, Map<String, String> properties, Path logDir)
      throws IOException, InterruptedException {
    return start(name, jar, httpPort, properties, Map.of(), logDir);
  }

  /**
   * As {@link #start(String, Path, int, Map, Path)}, with extra environment variables: for secrets,
   * which unlike system properties are not written to the log's command line.
   */
  public static ServiceProcess start(
      String name,
      Path jar,
      int httpPort,
      Map<String, String> properties,
      Map<String, String> environment,
      Path logDir)
      throws IOException, InterruptedException {
    ServiceProcess s = launch(name, jar, httpPort, properties, environment, logDir);
    s.awaitReady(Duration.ofSeconds(90));
    return s;
  }

  /** Starts {@code jar} without waiting for readiness (see {@link #awaitListening}). */
  public static ServiceProcess launch(
      String name, Path jar, int httpPort, Map<String, String> properties, Path logDir)
      throws IOException {
    return launch(name, jar, httpPort, properties, Map.of(), logDir);
  }

  /**
   * As {@link #launch(String, Path, int, Map, Path)}, with extra (unlogged) environment variables.
   */
  public static ServiceProcess launch(
      String name,
      Path jar,
      int httpPort,
      Map<String, String> properties,
      Map<String, String> environment,
      Path logDir)
      throws IOException {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " is missing: run mvn package first");
    }
    List<String> cmd = javaCommand("256m", httpPort, properties);
    cmd.add("-jar");
    cmd.add(jar.toString());
    return start(name, cmd, environment, httpPort, logDir);
  }

  /**
   * {@code java} with heap {@code heap}, the HTTP port and {@code properties} as system properties.
   */
  private static List<String> javaCommand(
      String heap, int httpPort, Map<String, String> properties) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx" + heap);
    cmd.add("-XX:TieredStopAtLevel=1");
    // As the relay image runs it (docs/deployment.md, "JVM options").
    cmd.add("-Djava.util.concurrent.ForkJoinPool.common.parallelism=2");
    cmd.add("-Dquarkus.http.port=" + httpPort);
    properties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
    return cmd;
  }

  /** Runs {@code cmd} with its output appended to {@code <logDir>/<name>.log}. */
  private static ServiceProcess start(
      String name, List<String> cmd, Map<String, String> environment, int httpPort, Path logDir)
      throws IOException {
    Files.createDirectories(logDir);
    Path log = logDir.resolve(name + ".log");
    Files.writeString(
        log,
        "=== " + String.join(" ", cmd) + "\n",
        java.nio.file.StandardOpenOption.CREATE,
        java.nio.file.StandardOpenOption.APPEND);
    ProcessBuilder builder =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    builder.environment().putAll(environment);
    Process p = builder.start();
    return new ServiceProcess(name, p, log, URI.create("http://127.0.0.1:" + httpPort));
  }

  /**
   * Starts {@code mainClass} from the module's test classpath (its test classes, classes and the
   * entries of {@link #testClasspath()} that {@code dependency} accepts: a JVM starts much faster
   * on the few jars it needs) as its own process, without waiting; the class must answer {@code
   * /q/health/live} and {@code /q/health/ready} on {@code httpPort} (passed as system property
   * {@code quarkus.http.port}, as to a packaged service) for {@link #awaitReady}.
   */
  public static ServiceProcess launchMain(
      String name,
      String mainClass,
      Predicate<String> dependency,
      int httpPort,
      Map<String, String> properties,
      Path logDir)
      throws IOException {
    List<String> cmd = javaCommand("128m", httpPort, properties);
    cmd.add("-cp");
    cmd.add(
        String.join(
            File.pathSeparator,
            Path.of("target", "test-classes").toAbsolutePath().toString(),
            Path.of("target", "classes").toAbsolutePath().toString(),
            String.join(
                File.pathSeparator,
                Arrays.stream(testClasspath().split(File.pathSeparator))
                    .filter(dependency)
                    .toList())));
    cmd.add(mainClass);
    return start(name, cmd, Map.of(), httpPort, logDir);
  }

  /**
   * The module's test dependencies, as the build writes them to {@code target/test-classpath.txt}
   * (maven-dependency-plugin build-classpath, in generate-test-resources).
   */
  public static String testClasspath() throws IOException {
    Path cpFile = Path.of("target", "test-classpath.txt");
    if (!Files.isRegularFile(cpFile)) {
      throw new IllegalStateException(
          cpFile.toAbsolutePath()
              + " is missing: run the build"
              + " (maven-dependency-plugin build-classpath writes it in generate-test-resources)");
    }
    return Files.readString(cpFile).trim();
  }

  public String name() {
    return name;
  }

  public URI baseUri() {
    return baseUri;
  }

  public long pid() {
    return process.pid();
  }

  public boolean alive() {
    return process.isAlive();
  }

  /** Waits until /q/health/ready answers 200. */
  public void awaitReady(Duration timeout) throws InterruptedException, IOException {
    awaitHealth("/q/health/ready", timeout);
  }

  /**
   * True when the process runs and /q/health/ready answers 200 now (false while it starts or
   * fails).
   */
  public boolean ready() {
    return answers200("/q/health/ready");
  }

  /**
   * True when the process runs and /q/health/live answers 200 now: started, whether ready or not (a
   * relay whose only destination is down is live but not ready).
   */
  public boolean live() {
    return answers200("/q/health/live");
  }

  private boolean answers200(String path) {
    try {
      return process.isAlive() && get(path).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Waits until the process answers HTTP at all (liveness 200), ready or not. */
  public void awaitListening(Duration timeout) throws InterruptedException, IOException {
    awaitHealth("/q/health/live", timeout);
  }

  private void awaitHealth(String path, Duration timeout) throws InterruptedException, IOException {
    try {
      await(name + " answering 200 on " + path)
          .atMost(timeout)
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(100))
          .ignoreExceptionsInstanceOf(IOException.class) // not listening yet
          .until(
              () -> {
                if (!process.isAlive()) {
                  throw new IllegalStateException(
                      name + " exited with " + process.exitValue() + ":\n" + tail());
                }
                return get(path).statusCode() == 200;
              });
    } catch (ConditionTimeoutException e) {
      throw new IllegalStateException(
          name + " not answering 200 on " + path + " after " + timeout + ":\n" + tail(), e);
    }
  }

  /** GET on the service; the body as text. */
  public HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return HTTP.send(
        HttpRequest.newBuilder(baseUri.resolve(path)).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /**
   * The sum of every Prometheus sample named {@code metric} at /q/metrics whose labels contain all
   * of {@code labels} (e.g. {@code outcome="dead"}); 0 when none.
   */
  public double metric(String metric, String... labels) throws IOException, InterruptedException {
    return sumSamples(get("/q/metrics").body(), metric, labels);
  }

  /** Sums the samples of one metric in a Prometheus text exposition; see {@link #metric}. */
  public static double sumSamples(String exposition, String metric, String... labels) {
    double sum = 0;
    for (String line : exposition.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (!m.find() || !m.group(1).equals(metric)) {
        continue;
      }
      String tags = m.group(2) == null ? "" : m.group(2);
      boolean all = true;
      for (String label : labels) {
        all &= tags.contains(label);
      }
      if (all) {
        sum += Double.parseDouble(m.group(3));
      }
    }
    return sum;
  }

  /** The last lines of the process's log, for failure messages. */
  public String tail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String logText() throws IOException {
    return Files.readString(log);
  }

  /** Waits for the process to end by itself (a failed start-up); its exit code. */
  public int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException(name + " still running after " + timeout + ":\n" + tail());
    }
    return process.exitValue();
  }

  /** SIGTERM and wait for the graceful shutdown; returns the exit code. */
  public int stop(Duration timeout) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly().waitFor();
    }
    return process.exitValue();
  }

  /** SIGKILL: the process dies at once, no shutdown hook runs. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor();
  }

  /**
   * SIGSTOP: every thread freezes, sockets stay open, timers stop (a long GC pause, a frozen VM).
   */
  public void pause() throws IOException, InterruptedException {
    signal("STOP");
  }

  /** SIGCONT after {@link #pause()}. */
  public void resume() throws IOException, InterruptedException {
    signal("CONT");
  }

  private void signal(String sig) throws IOException, InterruptedException {
    int rc =
        new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid()))
            .inheritIO()
            .start()
            .waitFor();
    if (rc != 0) {
      throw new IllegalStateException("kill -" + sig + " " + process.pid() + " exited with " + rc);
    }
  }

  @Override
  public void close() throws InterruptedException {
    terminate();
    awaitStopped();
  }

  /**
   * {@link #close()} for several processes at once: every one gets its SIGTERM before any is waited
   * for, so their graceful shutdowns overlap instead of adding up.
   */
  public static void closeAll(Collection<ServiceProcess> processes) throws InterruptedException {
    for (ServiceProcess p : processes) {
      p.terminate();
    }
    for (ServiceProcess p : processes) {
      p.awaitStopped();
    }
  }

  /** SIGTERM to a running process, without waiting for it. */
  private void terminate() throws InterruptedException {
    if (process.isAlive()) {
      try {
        resume(); // a paused process ignores SIGTERM until it runs again
      } catch (IOException | RuntimeException ignored) {
        // best effort
      }
      process.destroy();
    }
  }

  /** Waits up to 20 s for a terminated process to end, then kills it. */
  private void awaitStopped() throws InterruptedException {
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }

  /**
   * The packaged jar of a sibling module; tests run with the module's folder as working directory.
   */
  public static Path moduleJar(String module) {
    Path projectRoot = new File("").getAbsoluteFile().toPath().getParent();
    return projectRoot.resolve(module).resolve("target/quarkus-app/quarkus-run.jar");
  }

  /** A TCP port free on loopback at the time of the call. */
  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
