package dev.outboxrelay.relay.source;

import dev.outboxrelay.relay.config.ConfigChecks;
import dev.outboxrelay.relay.config.RelayConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * One configured outbox database, validated: its name, its Quarkus datasource and its claim
 * settings. {@link #fromConfig} reads {@code outbox.sources.*}, or, when none is set, makes the one
 * source {@value #DEFAULT} on {@code outbox.relay.datasource} (or the only active datasource), so a
 * single-database relay is configured as before.
 *
 * @param keyPrefix where its batch size and concurrency are configured, for error messages: {@code
 *     outbox.relay} (the single source) or {@code outbox.sources.<name>}
 */
public record SourceSpec(
    String name, String datasource, int batchSize, int concurrency, String keyPrefix) {
  /** The source of a relay configured without {@code outbox.sources.*}. */
  public static final String DEFAULT = "default";

  /**
   * A source whose settings are keyed {@code outbox.relay.*} for {@value #DEFAULT}, else {@code
   * outbox.sources.<name>.*}.
   */
  public SourceSpec(String name, String datasource, int batchSize, int concurrency) {
    this(
        name,
        datasource,
        batchSize,
        concurrency,
        DEFAULT.equals(name) ? "outbox.relay" : "outbox.sources." + name);
  }

  static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,62}");

  /**
   * The sources, in name order ({@value #DEFAULT} alone without {@code outbox.sources.*}).
   *
   * @param active the datasources whose {@code jdbc.url} is set
   * @param known every datasource the relay declares, for the error message
   * @throws IllegalArgumentException naming the key, for anything that cannot work
   */
  public static List<SourceSpec> fromConfig(
      RelayConfig config, Set<String> active, List<String> known) {
    RelayConfig.Relay relay = config.relay();
    List<SourceSpec> specs = new ArrayList<>();
    if (config.sources().isEmpty()) {
      specs.add(
          new SourceSpec(
              DEFAULT,
              defaultDatasource(relay, active, known),
              ConfigChecks.positive("outbox.relay.batch-size", relay.batchSize()),
              ConfigChecks.positive("outbox.relay.concurrency", relay.concurrency()),
              "outbox.relay"));
      return specs;
    }
    if (relay.datasource().isPresent()) {
      throw new IllegalArgumentException(
          "outbox.relay.datasource='"
              + relay.datasource().get()
              + "' is for a"
              + " relay with one database; with outbox.sources.* set, name each source's datasource there"
              + " (outbox.sources.<name>.datasource) and remove outbox.relay.datasource");
    }
    Map<String, String> byDatasource = new HashMap<>();
    for (Map.Entry<String, RelayConfig.Source> e : new TreeMap<>(config.sources()).entrySet()) {
      String name = e.getKey();
      String key = "outbox.sources." + name;
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException(
            key
                + ": a source name is letters, digits, '-' and '_' (at most 63,"
                + " starting with a letter or digit), was '"
                + name
                + "'");
      }
      String ds = e.getValue().datasource().strip();
      if (!active.contains(ds)) {
        throw new IllegalArgumentException(
            key
                + ".datasource='"
                + ds
                + "' is not an active datasource (set"
                + " quarkus.datasource."
                + ds
                + ".jdbc.url"
                + (known.contains(ds)
                    ? ""
                    : "; the relay declares "
                        + known
                        + ", others need quarkus.datasource."
                        + ds
                        + ".db-kind in its application.properties"
                        + " and a rebuild")
                + "); active: "
                + new TreeSet<>(active));
      }
      String other = byDatasource.putIfAbsent(ds, name);
      if (other != null) {
        throw new IllegalArgumentException(
            key
                + ".datasource='"
                + ds
                + "' is already the datasource of source '"
                + other
                + "': two claim loops and reapers on one outbox table are one source, configured once");
      }
      specs.add(
          new SourceSpec(
              name,
              ds,
              ConfigChecks.positive(
                  key + ".batch-size", e.getValue().batchSize().orElse(relay.batchSize())),
              ConfigChecks.positive(
                  key + ".concurrency", e.getValue().concurrency().orElse(relay.concurrency())),
              key));
    }
    return specs;
  }

  private static String defaultDatasource(
      RelayConfig.Relay relay, Set<String> active, List<String> known) {
    Set<String> sorted = new TreeSet<>(active);
    if (relay.datasource().isPresent()) {
      String name = relay.datasource().get();
      if (!active.contains(name)) {
        throw new IllegalArgumentException(
            "outbox.relay.datasource='"
                + name
                + "' is not an active"
                + " datasource (set quarkus.datasource."
                + name
                + ".jdbc.url); active: "
                + sorted);
      }
      return name;
    }
    if (active.size() != 1) {
      throw new IllegalArgumentException(
          active.isEmpty()
              ? "no outbox database configured: set the jdbc.url of one of the datasources "
                  + known
                  + " (e.g. quarkus.datasource.postgresql.jdbc.url)"
              : "several datasources are active "
                  + sorted
                  + ": choose one with outbox.relay.datasource, or"
                  + " deliver from each with outbox.sources.<name>.datasource");
    }
    return active.iterator().next();
  }
}
