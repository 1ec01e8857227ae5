package dev.outboxrelay.relay.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.outboxrelay.relay.config.ConfigurationReference.Key;
import dev.outboxrelay.relay.config.ConfigurationReference.Section;
import io.smallrye.config.ConfigMappings;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md is generated from the {@code @ConfigMapping} interfaces: this test fails
 * when the file and the interfaces differ, naming the keys and the command that regenerates it
 * ({@value ConfigurationReference#REGENERATE}); with {@code -Dconfig.reference.write=true} it
 * writes the file instead.
 */
class ConfigurationReferenceTest {
  static final Map<Class<?>, List<Section>> MAPPINGS = new LinkedHashMap<>();

  @BeforeAll
  static void generate() throws IOException {
    for (Class<?> mapping : ConfigurationReference.mappings()) {
      MAPPINGS.put(mapping, ConfigurationReference.sections(mapping));
    }
  }

  @Test
  void docsConfigurationMdIsUpToDate() throws IOException {
    String generated = ConfigurationReference.render(MAPPINGS);
    if (Boolean.getBoolean("config.reference.write")) {
      Files.createDirectories(ConfigurationReference.DOC.getParent());
      Files.writeString(ConfigurationReference.DOC, generated);
      System.out.println("wrote " + ConfigurationReference.DOC);
    }
    String current =
        Files.exists(ConfigurationReference.DOC)
            ? Files.readString(ConfigurationReference.DOC)
            : "";
    if (generated.equals(current)) {
      return;
    }
    Map<String, String> want = ConfigurationReference.rows(generated);
    Map<String, String> have = ConfigurationReference.rows(current);
    List<String> problems = new ArrayList<>();
    List<String> missing = want.keySet().stream().filter(k -> !have.containsKey(k)).toList();
    List<String> gone = have.keySet().stream().filter(k -> !want.containsKey(k)).toList();
    List<String> changed =
        want.keySet().stream()
            .filter(k -> have.containsKey(k) && !Objects.equals(want.get(k), have.get(k)))
            .toList();
    if (!missing.isEmpty()) {
      problems.add("keys missing from it: " + missing);
    }
    if (!gone.isEmpty()) {
      problems.add("keys no mapping has any more: " + gone);
    }
    if (!changed.isEmpty()) {
      problems.add("keys whose type, default or description changed: " + changed);
    }
    if (problems.isEmpty()) {
      problems.add("the text around the tables (or the order of keys) changed");
    }
    fail(
        ConfigurationReference.DOC
            + " is out of date with the @ConfigMapping interfaces: "
            + String.join("; ", problems)
            + ". Regenerate it with:\n  "
            + ConfigurationReference.REGENERATE);
  }

  /** The generator names keys exactly as SmallRye Config does at run time. */
  @Test
  void everyKeyIsNamedAsSmallRyeNamesIt() {
    MAPPINGS.forEach(
        (mapping, sections) -> {
          TreeSet<String> documented =
              ConfigurationReference.keys(sections).stream()
                  .map(k -> k.name().replace(ConfigurationReference.MAP_KEY, "*"))
                  .collect(Collectors.toCollection(TreeSet::new));
          TreeSet<String> mapped =
              new TreeSet<>(
                  ConfigMappings.getProperties(ConfigMappings.ConfigClass.configClass(mapping))
                      .keySet());
          assertEquals(mapped, documented, mapping.getName());
        });
  }

  /** CONTRIBUTING.md: every key has Javadoc; here it is the key's only description. */
  @Test
  void everyKeyIsDescribed() {
    List<String> undescribed =
        MAPPINGS.values().stream()
            .flatMap(s -> ConfigurationReference.keys(s).stream())
            .filter(k -> k.description().isBlank())
            .map(Key::name)
            .toList();
    assertEquals(
        List.of(),
        undescribed,
        "keys without Javadoc on their method (add it, then regenerate: "
            + ConfigurationReference.REGENERATE
            + ")");
  }

  @Test
  void typesDefaultsAndMapKeysAreTheMappings() {
    Map<String, Key> keys = new LinkedHashMap<>();
    ConfigurationReference.keys(MAPPINGS.get(RelayConfig.class))
        .forEach(k -> keys.put(k.name(), k));
    assertEquals(
        new Key(
            "outbox.relay.lease-duration",
            "duration",
            "`30s`",
            "Lease taken by a claim; renewed every lease/3 while a send runs."),
        keys.get("outbox.relay.lease-duration"));
    assertEquals("integer", keys.get("outbox.relay.batch-size").type());
    assertEquals("decimal", keys.get("outbox.relay.backoff.multiplier").type());
    assertEquals("boolean", keys.get("outbox.retention.enabled").type());
    Key datasource = keys.get("outbox.sources.<name>.datasource");
    assertEquals("**required**", datasource.defaultValue());
    Key url = keys.get("outbox.destinations.<name>.url");
    assertEquals("URI", url.type());
    assertEquals("(unset)", url.defaultValue());
    assertEquals("`none`", keys.get("outbox.destinations.<name>.confirmation.type").defaultValue());
  }

  @Test
  void javadocBecomesOneLineOfMarkdown() {
    assertEquals(
        "First wait after an empty claim; doubles up to `idle-max-wait`. See `a.b=<c>` and Backoff.",
        JavadocIndex.clean(
            """
             * First wait after an empty claim; doubles up to {@link #idleMaxWait()}.
             * <p>See {@code a.b=<c>} and {@link RelayConfig.Backoff Backoff}.
             * @see Other
            """));
    // Code spans keep < and >; elsewhere they would be read as HTML.
    assertEquals(
        "`a.<name>` &lt;b&gt; a \\| b", ConfigurationReference.cell("`a.<name>` <b> a | b"));
  }
}
