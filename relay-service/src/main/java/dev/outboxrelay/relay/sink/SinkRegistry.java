package dev.outboxrelay.relay.sink;

import dev.outboxrelay.relay.config.RelayConfig;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** Builds one sink per configured destination; fails start-up naming the bad key. */
public final class SinkRegistry {
  private final Map<String, MessageSink> sinks;

  public SinkRegistry(Map<String, MessageSink> sinks) {
    this.sinks = Map.copyOf(sinks);
  }

  public static SinkRegistry fromConfig(Map<String, RelayConfig.Destination> destinations) {
    Map<String, MessageSink> sinks = new TreeMap<>();
    destinations.forEach((name, d) -> sinks.put(name, create(name, d)));
    return new SinkRegistry(sinks);
  }

  private static MessageSink create(String name, RelayConfig.Destination d) {
    String key = "outbox.destinations." + name;
    switch (d.type()) {
      case "http":
        var url = d.url().orElseThrow(() -> new IllegalArgumentException(
            key + ".url is required for type http"));
        if (!"http".equals(url.getScheme()) && !"https".equals(url.getScheme())) {
          throw new IllegalArgumentException(key + ".url must be an http(s) URL, was " + url);
        }
        return new HttpSink(url, d.connectTimeout(), d.requestTimeout());
      default:
        throw new IllegalArgumentException(
            key + ".type '" + d.type() + "' is not supported; supported: http");
    }
  }

  public Optional<MessageSink> forDestination(String destination) {
    return Optional.ofNullable(sinks.get(destination));
  }

  public java.util.Set<String> destinations() {
    return sinks.keySet();
  }
}
