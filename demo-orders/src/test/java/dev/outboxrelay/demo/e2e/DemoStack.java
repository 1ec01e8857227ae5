package dev.outboxrelay.demo.e2e;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.h2.tools.Server;

/**
 * The two packaged services as bin/demo runs them: demo-orders and the relay as real processes
 * sharing one H2 database in server mode, the relay delivering the {@code billing} destination to
 * the demo's sink. Each end-to-end IT adds only its own settings and environment; {@link #close()}
 * stops the relay first (it is the demo sink's client), then the demo, then the database.
 */
final class DemoStack implements AutoCloseable {
  final ServiceProcess demo;
  final ServiceProcess relay;
  private final Server h2;

  /** Settings and environment for one service. */
  record Settings(Map<String, String> properties, Map<String, String> environment) {
    static Settings none() {
      return new Settings(Map.of(), Map.of());
    }
  }

  /**
   * Starts the stack under {@code target/<name>}. {@code relaySettings} is given the demo's base
   * URI, since the relay's sink routes point at the running demo.
   */
  static DemoStack start(String name, Settings demoSettings,
      java.util.function.Function<String, Settings> relaySettings) throws Exception {
    Path work = Path.of("target", name).toAbsolutePath();
    Files.createDirectories(work.resolve("db"));
    int h2Port = ServiceProcess.freePort();
    Server h2 = Server.createTcpServer("-tcp", "-tcpPort", String.valueOf(h2Port), "-ifNotExists",
        "-baseDir", work.resolve("db").toString()).start();
    ServiceProcess demo = null;
    try {
      String dbUrl = "jdbc:h2:tcp://localhost:" + h2Port + "/" + name + "-" + System.nanoTime();
      demo = ServiceProcess.start("demo-orders", ServiceProcess.moduleJar("demo-orders"), ServiceProcess.freePort(),
          merge(demoSettings.properties(), Map.of("quarkus.datasource.jdbc.url", dbUrl)),
          demoSettings.environment(), work);
      Settings relay = relaySettings.apply(demo.baseUri().toString());
      ServiceProcess relayProcess = ServiceProcess.start("relay-service", ServiceProcess.moduleJar("relay-service"),
          ServiceProcess.freePort(), merge(relay.properties(), Map.of("quarkus.datasource.h2.jdbc.url", dbUrl,
              "outbox.destinations.billing.type", "http",
              "outbox.destinations.billing.url", demo.baseUri() + "/sink/billing")),
          relay.environment(), work);
      return new DemoStack(h2, demo, relayProcess);
    } catch (Exception | Error e) {
      if (demo != null) {
        demo.close();
      }
      h2.stop();
      throw e;
    }
  }

  private DemoStack(Server h2, ServiceProcess demo, ServiceProcess relay) {
    this.h2 = h2;
    this.demo = demo;
    this.relay = relay;
  }

  static Map<String, String> merge(Map<String, String> a, Map<String, String> b) {
    Map<String, String> all = new HashMap<>(a);
    all.putAll(b);
    return all;
  }

  @Override
  public void close() throws Exception {
    try {
      relay.close();
    } finally {
      try {
        demo.close();
      } finally {
        h2.stop();
      }
    }
  }
}
