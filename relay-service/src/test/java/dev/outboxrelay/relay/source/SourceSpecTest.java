package dev.outboxrelay.relay.source;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.relay.config.RelayConfig;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Sources from configuration, and the pool each needs. */
class SourceSpecTest {
  static final List<String> KNOWN = List.of("h2", "postgresql", "mariadb", "sqlserver");

  static RelayConfig config(Map<String, String> properties) {
    return new SmallRyeConfigBuilder()
        // Expressions, as Quarkus expands them: outbox.rabbitmq.* default to ${rabbitmq-host:...}.
        .addDefaultInterceptors()
        .withSources(new PropertiesConfigSource(properties, "test", 500))
        .withConverter(Duration.class, 100, new DurationConverter())
        .withMapping(RelayConfig.class)
        .build()
        .getConfigMapping(RelayConfig.class);
  }

  private static IllegalArgumentException refused(
      Map<String, String> properties, Set<String> active) {
    return assertThrows(
        IllegalArgumentException.class,
        () -> SourceSpec.fromConfig(config(properties), active, KNOWN));
  }

  @Test
  void withoutSourcesTheOnlyActiveDatasourceIsTheSourceDefault() {
    assertEquals(
        List.of(new SourceSpec("default", "postgresql", 64, 32)),
        SourceSpec.fromConfig(config(Map.of()), Set.of("postgresql"), KNOWN));
    assertEquals(
        List.of(new SourceSpec("default", "h2", 8, 4)),
        SourceSpec.fromConfig(
            config(
                Map.of(
                    "outbox.relay.datasource",
                    "h2",
                    "outbox.relay.batch-size",
                    "8",
                    "outbox.relay.concurrency",
                    "4")),
            Set.of("postgresql", "h2"),
            KNOWN));
    assertTrue(
        refused(Map.of(), Set.of("postgresql", "h2"))
            .getMessage()
            .contains(
                "choose one with outbox.relay.datasource, or deliver from each with outbox.sources"));
  }

  @Test
  void namedSourcesInheritTheRelaySettingsUnlessTheyOverrideThem() {
    List<SourceSpec> specs =
        SourceSpec.fromConfig(
            config(
                Map.of(
                    "outbox.relay.batch-size", "16",
                    "outbox.sources.orders.datasource", "postgresql",
                    "outbox.sources.billing.datasource", "mariadb",
                    "outbox.sources.billing.batch-size", "4",
                    "outbox.sources.billing.concurrency", "2")),
            Set.of("postgresql", "mariadb", "h2"),
            KNOWN);
    assertEquals(
        List.of(
            new SourceSpec("billing", "mariadb", 4, 2),
            new SourceSpec("orders", "postgresql", 16, 32)),
        specs);
  }

  @Test
  void badSourcesFailNamingTheKey() {
    Set<String> active = Set.of("postgresql", "mariadb");
    assertTrue(
        refused(Map.of("outbox.sources.a.datasource", "h2"), active)
            .getMessage()
            .startsWith(
                "outbox.sources.a.datasource='h2' is not an active datasource (set quarkus.datasource.h2.jdbc.url)"));
    assertTrue(
        refused(Map.of("outbox.sources.a.datasource", "orders"), active)
            .getMessage()
            .contains("others need quarkus.datasource.orders.db-kind"));
    assertTrue(
        refused(
                Map.of(
                    "outbox.sources.a.datasource",
                    "postgresql",
                    "outbox.sources.b.datasource",
                    "postgresql"),
                active)
            .getMessage()
            .startsWith(
                "outbox.sources.b.datasource='postgresql' is already the datasource of source 'a'"));
    assertTrue(
        refused(
                Map.of(
                    "outbox.sources.a.datasource",
                    "postgresql",
                    "outbox.relay.datasource",
                    "postgresql"),
                active)
            .getMessage()
            .startsWith(
                "outbox.relay.datasource='postgresql' is for a relay" + " with one database"));
    assertTrue(
        refused(
                Map.of(
                    "outbox.sources.a.datasource",
                    "postgresql",
                    "outbox.sources.a.concurrency",
                    "0"),
                active)
            .getMessage()
            .equals("outbox.sources.a.concurrency must be positive, was 0"));
    assertTrue(
        refused(Map.of("outbox.sources.\"a b\".datasource", "postgresql"), active)
            .getMessage()
            .startsWith("outbox.sources.a b: a source name is letters, digits"));
  }

  @Test
  void defaultPoolFitsTheDefaultConcurrency() {
    assertDoesNotThrow(() -> PoolSize.check(new SourceSpec("default", "postgresql", 32, 32), 48));
    assertDoesNotThrow(() -> PoolSize.check(new SourceSpec("default", "postgresql", 32, 44), 48));
  }

  /**
   * A send in flight holds no connection, only the (at most 16) worker threads do: a concurrency
   * raised for slow sinks needs no larger pool.
   */
  @Test
  void aLargeConcurrencyNeedsOnlyTheWorkerThreadsConnections() {
    assertEquals(20, PoolSize.needed(32));
    assertEquals(20, PoolSize.needed(1000));
    assertEquals(5, PoolSize.needed(1));
    assertDoesNotThrow(() -> PoolSize.check(new SourceSpec("default", "postgresql", 32, 500), 20));
  }

  @Test
  void tooManyWorkersForThePoolFailsNamingBothKeys() {
    var e =
        assertThrows(
            IllegalArgumentException.class,
            () -> PoolSize.check(new SourceSpec("default", "h2", 32, 45), 19));
    assertTrue(
        e.getMessage()
            .startsWith(
                "outbox.relay.concurrency=45 needs at least 20 connections (16 worker threads"
                    + " + 4), but quarkus.datasource.h2.jdbc.max-size is 19"),
        e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> PoolSize.check(new SourceSpec("orders", "postgresql", 32, 8), 10));
    assertTrue(
        e.getMessage().startsWith("outbox.sources.orders.concurrency=8 needs at least 12"),
        e.getMessage());
  }

  /** The PostgreSQL notification listener's connection comes on top; without it the relay polls. */
  @Test
  void theListenerRunsOnlyWithAConnectionToSpare() {
    assertTrue(PoolSize.listenerFits(32, 48));
    assertTrue(PoolSize.listenerFits(500, 21));
    assertTrue(!PoolSize.listenerFits(500, 20), "16 + 4 fills the pool: the relay polls");
  }
}
