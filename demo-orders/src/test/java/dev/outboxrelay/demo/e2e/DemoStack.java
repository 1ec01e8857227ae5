package dev.outboxrelay.demo.e2e;

import dev.outboxrelay.demo.DemoH2Server;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * The two packaged services as bin/demo runs them: demo-orders and the relay as real processes
 * sharing one H2 database in server mode, the relay delivering the {@code billing} destination to
 * the demo's sink. Each end-to-end IT adds only its own settings and environment; {@link #close()}
 * stops the relay first (it is the demo sink's client), then the demo, then the database.
 */
final class DemoStack implements AutoCloseable {
  final ServiceProcess demo;
  final ServiceProcess relay;
  private final DemoH2Server h2;

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
  static DemoStack start(
      String name, Settings demoSettings, Function<String, Settings> relaySettings)
      throws Exception {
    Path work = Path.of("target", name).toAbsolutePath();
    DemoH2Server h2 = DemoH2Server.start(work, name);
    ServiceProcess demo = null;
    try {
      String dbUrl = h2.url();
      demo =
          ServiceProcess.start(
              "demo-orders",
              ServiceProcess.moduleJar("demo-orders"),
              ServiceProcess.freePort(),
              merge(demoSettings.properties(), Map.of("quarkus.datasource.jdbc.url", dbUrl)),
              demoSettings.environment(),
              work);
      Settings relay = relaySettings.apply(demo.baseUri().toString());
      ServiceProcess relayProcess =
          ServiceProcess.start(
              "relay-service",
              ServiceProcess.moduleJar("relay-service"),
              ServiceProcess.freePort(),
              merge(
                  relay.properties(),
                  Map.of(
                      "quarkus.datasource.h2.jdbc.url",
                      dbUrl,
                      "outbox.destinations.billing.type",
                      "http",
                      "outbox.destinations.billing.url",
                      demo.baseUri() + "/sink/billing")),
              relay.environment(),
              work);
      return new DemoStack(h2, demo, relayProcess);
    } catch (Exception | Error e) {
      if (demo != null) {
        demo.close();
      }
      h2.close();
      throw e;
    }
  }

  private DemoStack(DemoH2Server h2, ServiceProcess demo, ServiceProcess relay) {
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
        h2.close();
      }
    }
  }
}
