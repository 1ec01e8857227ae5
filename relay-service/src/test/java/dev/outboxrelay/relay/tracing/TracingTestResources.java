package dev.outboxrelay.relay.tracing;

import dev.outboxrelay.outbox.testing.KafkaBroker;
import dev.outboxrelay.relay.testing.RecordingHttpReceiver;
import dev.outboxrelay.relay.testing.RelayTestResources;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/**
 * What {@link DeliveryTracingTest}'s relay delivers to: a real HTTP receiver, a real Kafka broker
 * (KRaft, as a process) and the local RabbitMQ, each as one destination, on a PostgreSQL schema of
 * its own ({@value #SCHEMA}); with the OpenTelemetry SDK on and batches exported every 20 ms.
 */
public class TracingTestResources implements QuarkusTestResourceLifecycleManager {
  static final String SCHEMA = "relay_trace_it";
  static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8);
  static final String TOPIC = "outbox.tracing." + SUFFIX;
  static final String ROUTING_KEY = "tracing." + SUFFIX;
  static RecordingHttpReceiver receiver;
  static KafkaBroker kafka;

  @Override
  public Map<String, String> start() {
    String url = RelayTestResources.testSchema(SCHEMA);
    try {
      receiver = new RecordingHttpReceiver();
      kafka = KafkaBroker.startFresh(Path.of("target", "tracing-kafka"));
    } catch (Exception e) {
      throw new IllegalStateException("tracing test resources: " + e.getMessage(), e);
    }
    return Map.ofEntries(
        Map.entry("quarkus.datasource.postgresql.jdbc.url", url + "?currentSchema=" + SCHEMA),
        Map.entry("quarkus.otel.sdk.disabled", "false"),
        Map.entry("quarkus.otel.bsp.schedule.delay", "20ms"),
        Map.entry("kafka.bootstrap.servers", kafka.bootstrapServers()),
        Map.entry("rabbitmq-host", "127.0.0.1"),
        Map.entry("rabbitmq-port", "5672"),
        Map.entry("rabbitmq-username", "guest"),
        Map.entry("rabbitmq-password", "guest"),
        Map.entry("outbox.destinations.traced-http.type", "http"),
        Map.entry("outbox.destinations.traced-http.url", receiver.url("/traced").toString()),
        Map.entry("outbox.destinations.traced-kafka.type", "kafka"),
        Map.entry("outbox.destinations.traced-kafka.topic", TOPIC),
        Map.entry("outbox.destinations.traced-rabbit.type", "rabbitmq"),
        Map.entry("outbox.destinations.traced-rabbit.routing-key", ROUTING_KEY));
  }

  @Override
  public void stop() {
    if (receiver != null) {
      receiver.close();
    }
    if (kafka != null) {
      try {
        kafka.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
