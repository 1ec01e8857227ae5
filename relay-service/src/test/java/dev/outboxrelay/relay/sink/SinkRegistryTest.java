package dev.outboxrelay.relay.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.relay.config.RelayConfig;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Start-up validation of destinations, the HMAC secret in particular. */
class SinkRegistryTest {

  record Destination(String type, Optional<URI> url, Optional<String> hmacSecret, Optional<String> exchange,
      Optional<String> routingKey) implements RelayConfig.Destination {
    Destination(String type, Optional<URI> url, Optional<String> hmacSecret) {
      this(type, url, hmacSecret, Optional.empty(), Optional.empty());
    }

    static Destination rabbitMq(String exchange, String routingKey) {
      return new Destination("rabbitmq", Optional.empty(), Optional.empty(), Optional.ofNullable(exchange),
          Optional.ofNullable(routingKey));
    }

    @Override
    public Duration connectTimeout() {
      return Duration.ofSeconds(2);
    }

    @Override
    public Duration requestTimeout() {
      return Duration.ofSeconds(10);
    }

    @Override
    public Optional<String> topic() {
      return Optional.empty();
    }

    @Override
    public RelayConfig.Confirmation confirmation() {
      return new RelayConfig.Confirmation() {
        @Override
        public String type() {
          return "none";
        }

        @Override
        public Optional<URI> url() {
          return Optional.empty();
        }
      };
    }

    @Override
    public RelayConfig.Reconcile reconcile() {
      return new RelayConfig.Reconcile() {
        @Override
        public boolean redriveUnconfirmed() {
          return false;
        }

        @Override
        public boolean acceptConfirmedNotSent() {
          return false;
        }
      };
    }
  }

  static Destination http(Optional<String> secret) {
    return new Destination("http", Optional.of(URI.create("http://127.0.0.1:1/hook")), secret);
  }

  @Test
  void aSecretMakesTheSinkSign() {
    SinkRegistry r = SinkRegistry.fromConfig(Map.of("a", http(Optional.of("s3cret")), "b", http(Optional.empty())));
    assertTrue(((HttpSink) r.forDestination("a").orElseThrow()).signs());
    assertFalse(((HttpSink) r.forDestination("b").orElseThrow()).signs());
  }

  @Test
  void aBlankSecretFailsNamingTheKeyNotTheValue() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SinkRegistry.fromConfig(Map.of("billing", http(Optional.of(" \t ")))));
    assertTrue(e.getMessage().startsWith("outbox.destinations.billing.hmac-secret is blank"), e.getMessage());
  }

  /** The config mapping reads {@code key=} as unset; without this check it would send unsigned. */
  @Test
  void anEmptySecretFailsNamingTheKey() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SinkRegistry.fromConfig(Map.of("billing", http(Optional.empty())),
            key -> key.equals("outbox.destinations.billing.hmac-secret") ? "" : null, BrokerChannels.none()));
    assertEquals("outbox.destinations.billing.hmac-secret is set but empty: set a secret, or remove the key"
        + " to send unsigned", e.getMessage());
  }

  @Test
  void otherErrorsDoNotCarryTheSecret() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SinkRegistry.fromConfig(Map.of("billing",
            new Destination("http", Optional.of(URI.create("ftp://x/")), Optional.of("s3cret")))));
    assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
  }

  @Test
  void aKafkaDestinationPublishesToTheTopicNamedAfterItUnlessSet() {
    SinkRegistry r = SinkRegistry.fromConfig(Map.of("orders",
        new Destination("kafka", Optional.empty(), Optional.empty())));
    assertTrue(r.forDestination("orders").orElseThrow() instanceof KafkaSink);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SinkRegistry.fromConfig(
        Map.of("bad name!", new Destination("kafka", Optional.empty(), Optional.empty()))));
    assertTrue(e.getMessage().startsWith("outbox.destinations.bad name!.topic must be a Kafka topic name"),
        e.getMessage());
  }

  @Test
  void aRabbitMqDestinationRoutesByItsNameUnlessSetWithinTheChannelsExchange() {
    SinkRegistry r = SinkRegistry.fromConfig(Map.of(
        "emails", Destination.rabbitMq(null, null),
        "sms", Destination.rabbitMq("outbox", "notify.sms")),
        key -> key.equals(RabbitMqSink.EXCHANGE_KEY) ? "outbox" : null, BrokerChannels.none());
    assertEquals("emails", ((RabbitMqSink) r.forDestination("emails").orElseThrow()).routingKey());
    assertEquals("notify.sms", ((RabbitMqSink) r.forDestination("sms").orElseThrow()).routingKey());
  }

  /** The connector publishes to one exchange per channel: another would silently go elsewhere. */
  @Test
  void aRabbitMqDestinationNamingAnotherExchangeFailsNamingTheKeys() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SinkRegistry.fromConfig(
        Map.of("emails", Destination.rabbitMq("mail", null)),
        key -> key.equals(RabbitMqSink.EXCHANGE_KEY) ? "outbox" : null, BrokerChannels.none()));
    assertTrue(e.getMessage().startsWith("outbox.destinations.emails.exchange 'mail' differs from the relay's"
        + " RabbitMQ exchange 'outbox' (mp.messaging.outgoing.outbox-rabbitmq.exchange.name)"), e.getMessage());
    IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class, () -> SinkRegistry.fromConfig(
        Map.of("emails", Destination.rabbitMq(null, "k".repeat(256)))));
    assertEquals("outbox.destinations.emails.routing-key must be at most 255 characters, was 256",
        tooLong.getMessage());
  }

  @Test
  void anUnknownTypeNamesTheSupportedOnes() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SinkRegistry.fromConfig(
        Map.of("x", new Destination("smtp", Optional.empty(), Optional.empty()))));
    assertEquals("outbox.destinations.x.type 'smtp' is not supported; supported: http, kafka, rabbitmq",
        e.getMessage());
  }
}
