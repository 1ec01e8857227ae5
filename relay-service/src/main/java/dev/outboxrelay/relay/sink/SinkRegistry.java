package dev.outboxrelay.relay.sink;

import dev.outboxrelay.relay.config.RelayConfig;
import dev.outboxrelay.relay.state.DestinationStates;
import dev.outboxrelay.relay.state.StateChangeLog;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/** Builds one sink per configured destination; fails start-up naming the bad key. */
public final class SinkRegistry {
  private final Map<String, MessageSink> sinks;

  /** {@code outbox.destinations.<name>.concurrency} where set. */
  private final Map<String, Integer> concurrency;

  public SinkRegistry(Map<String, MessageSink> sinks) {
    this(sinks, Map.of());
  }

  /**
   * @param concurrency deliveries in flight at once per destination, where a destination sets it
   */
  public SinkRegistry(Map<String, MessageSink> sinks, Map<String, Integer> concurrency) {
    this.sinks = Map.copyOf(sinks);
    this.concurrency = Map.copyOf(concurrency);
  }

  /** For tests and tools without brokers: a broker destination fails every delivery as a retry. */
  public static SinkRegistry fromConfig(Map<String, RelayConfig.Destination> destinations) {
    return fromConfig(destinations, key -> null, BrokerChannels.none());
  }

  /**
   * @param rawValue the configured value of a key as written, empty string included, or null when
   *     unset: the config mapping reads an empty value as unset, which for {@code hmac-secret}
   *     would silently send unsigned
   * @param channels what broker destinations publish through
   */
  public static SinkRegistry fromConfig(
      Map<String, RelayConfig.Destination> destinations,
      UnaryOperator<String> rawValue,
      BrokerChannels channels) {
    Map<String, MessageSink> sinks = new TreeMap<>();
    Map<String, Integer> concurrency = new TreeMap<>();
    destinations.forEach(
        (name, d) -> {
          sinks.put(name, create(name, d, rawValue, channels));
          d.concurrency()
              .ifPresent(
                  n -> {
                    if (n < 1) {
                      throw new IllegalArgumentException(
                          "outbox.destinations."
                              + name
                              + ".concurrency must be at least 1, was "
                              + n);
                    }
                    concurrency.put(name, n);
                  });
        });
    return new SinkRegistry(sinks, concurrency);
  }

  private static MessageSink create(
      String name,
      RelayConfig.Destination d,
      UnaryOperator<String> rawValue,
      BrokerChannels channels) {
    String key = "outbox.destinations." + name;
    if (d.hmacSecret().isEmpty() && rawValue.apply(key + ".hmac-secret") != null) {
      throw new IllegalArgumentException(
          key
              + ".hmac-secret is set but empty: set a secret, or remove"
              + " the key to send unsigned");
    }
    String type =
        d.type()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        UnconfiguredDestination.message(name, System.getenv())));
    switch (type) {
      case "http":
        var url =
            d.url()
                .orElseThrow(
                    () -> new IllegalArgumentException(key + ".url is required for type http"));
        if (!"http".equals(url.getScheme()) && !"https".equals(url.getScheme())) {
          throw new IllegalArgumentException(key + ".url must be an http(s) URL, was " + url);
        }
        if (d.hmacSecret().isPresent() && d.hmacSecret().get().isBlank()) {
          // Never echo the value: it is a secret.
          throw new IllegalArgumentException(
              key + ".hmac-secret is blank: set a secret or remove the key" + " to send unsigned");
        }
        return new HttpSink(url, d.connectTimeout(), d.requestTimeout(), d.hmacSecret());
      case "kafka":
        String topic = d.topic().orElse(name);
        if (!topic.matches("[a-zA-Z0-9._-]{1,249}")) {
          throw new IllegalArgumentException(
              key
                  + ".topic must be a Kafka topic name"
                  + " ([a-zA-Z0-9._-], at most 249 characters), was '"
                  + topic
                  + "'");
        }
        return new KafkaSink(
            topic, d.requestTimeout(), channels.kafkaVerdictWithin(), channels.kafka());
      case "rabbitmq":
        return rabbitMq(key, name, d, channels.rabbitmq());
      default:
        throw new IllegalArgumentException(
            key + ".type '" + type + "' is not supported; supported: http, kafka, rabbitmq");
    }
  }

  /**
   * Exchange (default {@code outbox.rabbitmq.exchange}) and routing key of a RabbitMQ destination.
   */
  private static MessageSink rabbitMq(
      String key, String name, RelayConfig.Destination d, RabbitMqConnection connection) {
    String exchange = d.exchange().orElse(connection.defaultExchange);
    if (exchange.isEmpty() || exchange.length() > 255 || !exchange.matches("[a-zA-Z0-9._:-]+")) {
      throw new IllegalArgumentException(
          key
              + ".exchange must be 1 to 255 letters, digits, '.', '_', ':' or '-'"
              + " (the default exchange '' cannot be declared or bound), was '"
              + exchange
              + "'");
    }
    String routingKey = d.routingKey().orElse(name);
    if (routingKey.length() > 255) {
      throw new IllegalArgumentException(
          key + ".routing-key must be at most 255 characters, was " + routingKey.length());
    }
    return new RabbitMqSink(name, exchange, routingKey, d.requestTimeout(), connection);
  }

  /**
   * The same sinks, each reporting its results to its destination's state in {@code states}:
   * delivered or refused for good (the sink answered) is a success, a retry (refused connection,
   * timeout, 5xx, 429) or a thrown exception a failure.
   */
  public SinkRegistry observed(DestinationStates states) {
    Map<String, MessageSink> observed = new TreeMap<>();
    sinks.forEach(
        (name, sink) -> {
          StateChangeLog state = states.of(name);
          observed.put(
              name,
              state == null
                  ? sink
                  : m -> {
                    try {
                      return sink.deliver(m)
                          .whenComplete(
                              (r, e) -> {
                                if (e != null) {
                                  state.failure(e.toString());
                                } else if (r instanceof SinkResult.RetryLater retry) {
                                  state.failure(retry.error());
                                } else {
                                  state.success();
                                }
                              });
                    } catch (RuntimeException e) {
                      state.failure(e.toString());
                      throw e;
                    }
                  });
        });
    return new SinkRegistry(observed, concurrency);
  }

  public Optional<MessageSink> forDestination(String destination) {
    return Optional.ofNullable(sinks.get(destination));
  }

  /** The destination's own {@code outbox.destinations.<name>.concurrency}, when set. */
  public OptionalInt concurrency(String destination) {
    Integer n = concurrency.get(destination);
    return n == null ? OptionalInt.empty() : OptionalInt.of(n);
  }

  public Set<String> destinations() {
    return sinks.keySet();
  }
}
