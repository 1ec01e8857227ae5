package dev.outboxrelay.relay.config;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.ConfigMappings;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * The configuration keys the relay reads, and whether an environment variable name is one of them
 * in SmallRye's environment form (upper case, every character other than a letter or digit as
 * {@code _}, a map key as any name: {@link UnknownVariableCheck.Key}). Deployment files
 * (compose.yaml, the Kubernetes manifests) configure the relay by environment variables, which
 * nothing checks at run time: a misspelt name is silently ignored.
 */
final class RelayKeys {
  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final Path RELAY_PROPERTIES =
      ROOT.resolve("relay-service/src/main/resources/application.properties");

  /**
   * Keys the relay reads outside {@code outbox.*}, the datasources and its application.properties,
   * as the relay's README names them (a {@code *} stands for a user name).
   */
  static final List<String> OTHER_RELAY_KEYS =
      List.of(
          "kafka.bootstrap.servers",
          "rabbitmq-host",
          "rabbitmq-port",
          "rabbitmq-username",
          "rabbitmq-password",
          "quarkus.security.users.embedded.users.*",
          "quarkus.security.users.embedded.roles.*");

  /** Connection keys of a named datasource, {@code quarkus.datasource.<name>.*}. */
  static final List<String> DATASOURCE_KEYS = List.of("jdbc.url", "username", "password");

  private final Properties relayProperties;
  private final List<Pattern> outboxKeys = new ArrayList<>();
  private final List<Pattern> otherKeys = new ArrayList<>();

  private RelayKeys(Properties relayProperties) {
    this.relayProperties = relayProperties;
    ConfigMappings.getProperties(ConfigMappings.ConfigClass.configClass(RelayConfig.class))
        .keySet()
        .forEach(key -> outboxKeys.add(envPattern(key)));
    OTHER_RELAY_KEYS.forEach(key -> otherKeys.add(envPattern(key)));
    for (String datasource : datasources()) {
      DATASOURCE_KEYS.forEach(
          k -> otherKeys.add(envPattern("quarkus.datasource." + datasource + "." + k)));
    }
    relayProperties.stringPropertyNames().stream()
        .filter(k -> !k.startsWith("%"))
        .forEach(k -> otherKeys.add(envPattern(k)));
  }

  static RelayKeys load() throws IOException {
    return new RelayKeys(properties(RELAY_PROPERTIES));
  }

  Properties relayProperties() {
    return relayProperties;
  }

  /** The named datasources the relay declares ({@code quarkus.datasource.<name>.db-kind}). */
  List<String> datasources() {
    return relayProperties.stringPropertyNames().stream()
        .filter(k -> k.startsWith("quarkus.datasource.") && k.endsWith(".db-kind"))
        .map(k -> k.substring("quarkus.datasource.".length(), k.length() - ".db-kind".length()))
        .sorted()
        .toList();
  }

  /** True when {@code name} is the environment form of a key the relay reads. */
  boolean reads(String name) {
    List<Pattern> keys = name.startsWith("OUTBOX_") ? outboxKeys : otherKeys;
    return keys.stream().anyMatch(p -> p.matcher(name).matches());
  }

  /** The names among {@code names} that are no key of the relay, in order. */
  List<String> unknown(Collection<String> names) {
    return names.stream().filter(n -> !reads(n)).toList();
  }

  /** A key pattern ({@code *} for a map key) in the form of an environment variable name. */
  static Pattern envPattern(String key) {
    return UnknownVariableCheck.Key.of(key).pattern();
  }

  /** SmallRye's environment variable name for a key: {@code a.b-c} is {@code A_B_C}. */
  static String envName(String key) {
    return UnknownVariableCheck.envName(key);
  }

  /**
   * The relay's {@code outbox.*} configuration from these environment variables alone, resolved by
   * SmallRye Config as at run time (defaults, map keys, Quarkus' {@code 2s} durations).
   */
  static RelayConfig resolve(Map<String, String> environment) {
    SmallRyeConfig config =
        new SmallRyeConfigBuilder()
            // Expressions, as Quarkus expands them: outbox.rabbitmq.* default to
            // ${rabbitmq-host:...}.
            .addDefaultInterceptors()
            .withSources(new EnvConfigSource(environment, EnvConfigSource.ORDINAL))
            .withConverter(Duration.class, 100, new DurationConverter())
            .withMapping(RelayConfig.class)
            .build();
    return config.getConfigMapping(RelayConfig.class);
  }

  static Properties properties(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    }
    return p;
  }
}
