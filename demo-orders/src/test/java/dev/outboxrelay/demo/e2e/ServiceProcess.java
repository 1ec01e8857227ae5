package dev.outboxrelay.demo.e2e;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A packaged Quarkus service run as a real OS process ({@code java -jar quarkus-run.jar}), so
 * tests can stop it gracefully (SIGTERM) or kill it (SIGKILL) like an operator or a crash would.
 */
final class ServiceProcess implements AutoCloseable {
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
  static ServiceProcess start(String name, Path jar, int httpPort, Map<String, String> properties,
      Path logDir) throws IOException, InterruptedException {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " is missing: run mvn package first");
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    cmd.add("-Dquarkus.http.port=" + httpPort);
    properties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
    cmd.add("-jar");
    cmd.add(jar.toString());
    Files.createDirectories(logDir);
    Path log = logDir.resolve(name + ".log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    ServiceProcess s = new ServiceProcess(name, p, log, URI.create("http://127.0.0.1:" + httpPort));
    s.awaitReady(Duration.ofSeconds(90));
    return s;
  }

  URI baseUri() {
    return baseUri;
  }

  private void awaitReady(Duration timeout) throws InterruptedException, IOException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with " + process.exitValue() + ":\n" + tail());
      }
      try {
        HttpResponse<Void> r = http.send(HttpRequest.newBuilder(baseUri.resolve("/q/health/ready"))
            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(250);
    }
    throw new IllegalStateException(name + " not ready after " + timeout + ":\n" + tail());
  }

  /** The last lines of the process's log, for failure messages. */
  String tail() throws IOException {
    List<String> lines = Files.readAllLines(log);
    return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }

  String logText() throws IOException {
    return Files.readString(log);
  }

  /** SIGTERM and wait for the graceful shutdown; returns the exit code. */
  int stop(Duration timeout) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
      process.destroyForcibly().waitFor();
    }
    return process.exitValue();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      stop(Duration.ofSeconds(20));
    }
  }

  /** The packaged jar of a sibling module; tests run with the module's folder as working directory. */
  static Path moduleJar(String module) {
    Path projectRoot = new File("").getAbsoluteFile().toPath().getParent();
    return projectRoot.resolve(module).resolve("target/quarkus-app/quarkus-run.jar");
  }
}
