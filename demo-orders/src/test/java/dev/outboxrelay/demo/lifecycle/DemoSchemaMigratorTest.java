package dev.outboxrelay.demo.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.interceptor.Interceptor;
import java.io.IOException;
import java.lang.reflect.Parameter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The per-kind migrations stay in step, and each database product finds its directory. */
class DemoSchemaMigratorTest {
  static final Path SCRIPTS = Path.of("src/main/resources/db/demo");
  static final List<String> KINDS = List.of("h2", "postgresql", "mssql");
  static final Pattern CREATE =
      Pattern.compile("CREATE\\s+(TABLE|INDEX)\\s+(\\w+)", Pattern.CASE_INSENSITIVE);

  /**
   * Regression: the schema observers ran at the default priority, after Quarkus had started the
   * messaging channels (LIBRARY_BEFORE), so on a fresh database the Kafka and RabbitMQ consumers
   * received before {@code outbox_inbox} existed and failed every message until it did.
   */
  @Test
  void theSchemaIsMigratedBeforeTheBrokerConsumersStart() throws NoSuchMethodException {
    for (Class<?> migrator : List.of(DemoSchemaMigrator.class, OutboxSchemaMigrator.class)) {
      Parameter event =
          migrator.getDeclaredMethod("onStart", StartupEvent.class).getParameters()[0];
      Priority priority = event.getAnnotation(Priority.class);
      assertTrue(
          priority != null && priority.value() < Interceptor.Priority.LIBRARY_BEFORE,
          migrator.getSimpleName()
              + ".onStart must observe StartupEvent before the messaging channels start"
              + " (priority below "
              + Interceptor.Priority.LIBRARY_BEFORE
              + "), has "
              + priority);
    }
  }

  @Test
  void productNamesMapToTheirScriptDirectories() {
    assertEquals("h2", DemoSchemaMigrator.kindOf("H2"));
    assertEquals("postgresql", DemoSchemaMigrator.kindOf("PostgreSQL"));
    assertEquals("mssql", DemoSchemaMigrator.kindOf("Microsoft SQL Server"));
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> DemoSchemaMigrator.kindOf("Oracle"));
    assertTrue(e.getMessage().contains("'Oracle'"), e.getMessage());
  }

  @Test
  void everyKindHasTheSameScriptsCreatingTheSameTablesAndIndexes() throws IOException {
    Set<String> h2Scripts = scripts("h2");
    assertTrue(!h2Scripts.isEmpty(), "no scripts under " + SCRIPTS.resolve("h2"));
    for (String kind : KINDS) {
      assertEquals(h2Scripts, scripts(kind), "script names of db/demo/" + kind);
      for (String script : h2Scripts) {
        assertEquals(
            created("h2", script),
            created(kind, script),
            "tables and indexes created by db/demo/" + kind + "/" + script);
      }
    }
  }

  private static Set<String> scripts(String kind) throws IOException {
    try (Stream<Path> files = Files.list(SCRIPTS.resolve(kind))) {
      return new TreeSet<>(files.map(p -> p.getFileName().toString()).toList());
    }
  }

  private static Set<String> created(String kind, String script) throws IOException {
    String sql = Files.readString(SCRIPTS.resolve(kind).resolve(script));
    Set<String> names = new TreeSet<>();
    Matcher m = CREATE.matcher(sql.replaceAll("--[^\\n]*", ""));
    while (m.find()) {
      names.add(m.group(1).toUpperCase(Locale.ROOT) + " " + m.group(2).toLowerCase(Locale.ROOT));
    }
    return names;
  }
}
