package dev.outboxrelay.relay.sink;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * The relay's one Kafka producer, shared by every {@link KafkaSink}, created at the first Kafka
 * delivery (a relay without Kafka destinations never dials a broker). Its settings: the {@code
 * kafka.*} keys ({@code kafka.bootstrap.servers}, also as environment {@code
 * KAFKA_BOOTSTRAP_SERVERS}), overridden by the {@value #PREFIX}{@code *} keys of
 * application.properties (idempotent, {@code acks=all}, the timeouts).
 *
 * <p>The plain Kafka client, not a SmallRye channel: the SmallRye connector re-sends a record that
 * failed with a retriable error until {@code delivery.timeout.ms}, and a re-send still in the
 * producer when the connector gave up is written after the relay retried the job, a second copy per
 * outage; its retries can only be turned off together with the producer's idempotence. Here a send
 * has one verdict: the producer acknowledges the record, or fails it for good within {@code
 * max.block.ms} + {@code delivery.timeout.ms}.
 */
@ApplicationScoped
public class KafkaChannel implements KafkaSink.Producer {
  /**
   * Where the producer's settings are (the name it had as a SmallRye channel, kept for
   * deployments).
   */
  public static final String PREFIX = "mp.messaging.outgoing." + KafkaSink.CHANNEL + ".";

  /** Keys under {@link #PREFIX} that belonged to the SmallRye connector, not the producer. */
  private static final Set<String> NOT_PRODUCER_KEYS =
      Set.of("connector", "lazy-client", "topic", "health-enabled", "tracing-enabled", "merge");

  private static final Logger LOG = Logger.getLogger(KafkaChannel.class);

  /** Read by name, so that the environment form ({@code KAFKA_BOOTSTRAP_SERVERS}) works too. */
  static final String BOOTSTRAP = "kafka.bootstrap.servers";

  private KafkaProducer<String, String> producer;
  private boolean closed;

  @Override
  public void send(ProducerRecord<String, String> record, Callback callback) {
    producer().send(record, callback);
  }

  private synchronized KafkaProducer<String, String> producer() {
    if (closed) {
      throw new IllegalStateException("the relay is shutting down");
    }
    if (producer == null) {
      Map<String, Object> settings = settings(ConfigProvider.getConfig());
      LOG.infof(
          "Kafka producer for %s (delivery.timeout.ms=%s, max.block.ms=%s)",
          settings.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG),
          settings.get(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG),
          settings.get(ProducerConfig.MAX_BLOCK_MS_CONFIG));
      producer = new KafkaProducer<>(settings);
    }
    return producer;
  }

  /** {@code kafka.*} overridden by {@value #PREFIX}{@code *}, with String serializers. */
  static Map<String, Object> settings(Config config) {
    Map<String, Object> settings = new HashMap<>();
    for (String name : config.getPropertyNames()) {
      if (name.startsWith("kafka.")) {
        config
            .getOptionalValue(name, String.class)
            .ifPresent(v -> settings.put(name.substring("kafka.".length()), v));
      }
    }
    config
        .getOptionalValue(BOOTSTRAP, String.class)
        .ifPresent(v -> settings.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, v));
    for (String name : config.getPropertyNames()) {
      if (name.startsWith(PREFIX)) {
        String key = name.substring(PREFIX.length());
        if (!NOT_PRODUCER_KEYS.contains(key)) {
          config.getOptionalValue(name, String.class).ifPresent(v -> settings.put(key, v));
        }
      }
    }
    settings.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    settings.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    settings.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "outbox-relay");
    return settings;
  }

  /**
   * How long the producer may hold a record before it acknowledges or fails it for good: its {@code
   * max.block.ms} (waiting for metadata or buffer space in {@code send}) plus {@code
   * delivery.timeout.ms} (Kafka's defaults, 60 s and 120 s, when unset).
   */
  public static Duration verdictWithin() {
    Config config = ConfigProvider.getConfig();
    long maxBlock = config.getOptionalValue(PREFIX + "max.block.ms", Long.class).orElse(60_000L);
    long delivery =
        config.getOptionalValue(PREFIX + "delivery.timeout.ms", Long.class).orElse(120_000L);
    return Duration.ofMillis(maxBlock + delivery);
  }

  @PreDestroy
  synchronized void close() {
    closed = true;
    if (producer != null) {
      producer.close(Duration.ofSeconds(5));
    }
  }
}
