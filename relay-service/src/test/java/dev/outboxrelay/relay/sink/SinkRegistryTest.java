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
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** Start-up validation of destinations, the HMAC secret in particular. */
class SinkRegistryTest {

  record Destination(
      String kind,
      Optional<URI> url,
      Optional<String> hmacSecret,
      Optional<String> exchange,
      Optional<String> routingKey)
      implements RelayConfig.Destination {
    Destination(String kind, Optional<URI> url, Optional<String> hmacSecret) {
      this(kind, url, hmacSecret, Optional.empty(), Optional.empty());
    }

    @Override
    public Optional<String> type() {
      return Optional.ofNullable(kind);
    }

    static Destination rabbitMq(String exchange, String routingKey) {
      return new Destination(
          "rabbitmq",
          Optional.empty(),
          Optional.empty(),
          Optional.ofNullable(exchange),
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
    public OptionalInt concurrency() {
      return OptionalInt.empty();
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
    SinkRegistry r =
        SinkRegistry.fromConfig(
            Map.of("a", http(Optional.of("s3cret")), "b", http(Optional.empty())));
    assertTrue(((HttpSink) r.forDestination("a").orElseThrow()).signs());
    assertFalse(((HttpSink) r.forDestination("b").orElseThrow()).signs());
  }

  @Test
  void aBlankSecretFailsNamingTheKeyNotTheValue() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> SinkRegistry.fromConfig(Map.of("billing", http(Optional.of(" \t ")))));
    assertTrue(
        e.getMessage().startsWith("outbox.destinations.billing.hmac-secret is blank"),
        e.getMessage());
  }

  /** The config mapping reads {@code key=} as unset; without this check it would send unsigned. */
  @Test
  void anEmptySecretFailsNamingTheKey() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SinkRegistry.fromConfig(
                    Map.of("billing", http(Optional.empty())),
                    key -> key.equals("outbox.destinations.billing.hmac-secret") ? "" : null,
                    BrokerChannels.none()));
    assertEquals(
        "outbox.destinations.billing.hmac-secret is set but empty: set a secret, or remove the key"
            + " to send unsigned",
        e.getMessage());
  }

  @Test
  void otherErrorsDoNotCarryTheSecret() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SinkRegistry.fromConfig(
                    Map.of(
                        "billing",
                        new Destination(
                            "http", Optional.of(URI.create("ftp://x/")), Optional.of("s3cret")))));
    assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
  }

  @Test
  void aKafkaDestinationPublishesToTheTopicNamedAfterItUnlessSet() {
    SinkRegistry r =
        SinkRegistry.fromConfig(
            Map.of("orders", new Destination("kafka", Optional.empty(), Optional.empty())));
    assertTrue(r.forDestination("orders").orElseThrow() instanceof KafkaSink);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SinkRegistry.fromConfig(
                    Map.of(
                        "bad name!",
                        new Destination("kafka", Optional.empty(), Optional.empty()))));
    assertTrue(
        e.getMessage().startsWith("outbox.destinations.bad name!.topic must be a Kafka topic name"),
        e.getMessage());
  }

  @Test
  void aRabbitMqDestinationRoutesByItsNameToTheDefaultExchangeUnlessSet() {
    SinkRegistry r =
        SinkRegistry.fromConfig(
            Map.of(
                "emails", Destination.rabbitMq(null, null),
                "sms", Destination.rabbitMq("notify", "notify.sms")));
    RabbitMqSink emails = (RabbitMqSink) r.forDestination("emails").orElseThrow();
    assertEquals("outbox", emails.exchange());
    assertEquals("emails", emails.routingKey());
    RabbitMqSink sms = (RabbitMqSink) r.forDestination("sms").orElseThrow();
    assertEquals("notify", sms.exchange());
    assertEquals("notify.sms", sms.routingKey());
  }

  @Test
  void aRabbitMqDestinationWithAnUnusableExchangeOrRoutingKeyFailsNamingTheKey() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> SinkRegistry.fromConfig(Map.of("emails", Destination.rabbitMq("", null))));
    assertTrue(
        e.getMessage().startsWith("outbox.destinations.emails.exchange must be 1 to 255"),
        e.getMessage());
    IllegalArgumentException tooLong =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SinkRegistry.fromConfig(
                    Map.of("emails", Destination.rabbitMq(null, "k".repeat(256)))));
    assertEquals(
        "outbox.destinations.emails.routing-key must be at most 255 characters, was 256",
        tooLong.getMessage());
  }

  /** A secret in the environment for a destination the relay does not configure. */
  @Test
  void aDestinationWithoutTypeNamesTheVariablesThatMadeIt() {
    String m =
        UnconfiguredDestination.message(
            "hook",
            Map.of(
                "OUTBOX_DESTINATIONS_HOOK_HMAC_SECRET",
                "s3cret",
                "OUTBOX_DESTINATIONS_BILLING_URL",
                "http://x",
                "PATH",
                "/bin"));
    assertEquals(
        "outbox.destinations.hook.type is required (http, kafka or rabbitmq): destination 'hook' has"
            + " settings but no type, from the environment variable(s) OUTBOX_DESTINATIONS_HOOK_HMAC_SECRET. Remove"
            + " that variable if the relay has no destination 'hook', or set OUTBOX_DESTINATIONS_HOOK_TYPE (and the"
            + " destination's other keys)",
        m);
    assertFalse(m.contains("s3cret"), "never the secret's value");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SinkRegistry.fromConfig(
                    Map.of(
                        "hook", new Destination(null, Optional.empty(), Optional.of("s3cret")))));
    assertTrue(
        e.getMessage().startsWith("outbox.destinations.hook.type is required"), e.getMessage());
  }

  /** The relay never gives up on a record sooner than the producer may still write it. */
  @Test
  void aKafkaDeliveryWaitsAtLeastAsLongAsTheProducerMayHoldTheRecord() {
    assertEquals(
        Duration.ofSeconds(18), KafkaSink.ackWait(Duration.ofSeconds(10), Duration.ofSeconds(15)));
    assertEquals(
        Duration.ofSeconds(30), KafkaSink.ackWait(Duration.ofSeconds(30), Duration.ofSeconds(15)));
  }

  @Test
  void anUnknownTypeNamesTheSupportedOnes() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                SinkRegistry.fromConfig(
                    Map.of("x", new Destination("smtp", Optional.empty(), Optional.empty()))));
    assertEquals(
        "outbox.destinations.x.type 'smtp' is not supported; supported: http, kafka, rabbitmq",
        e.getMessage());
  }
}
