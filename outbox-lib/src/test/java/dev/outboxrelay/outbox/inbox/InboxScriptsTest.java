package dev.outboxrelay.outbox.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The inbox scripts of the four databases stay in step (same tables, indexes and columns), live
 * apart from the outbox's, and each dialect names its own folder.
 */
class InboxScriptsTest {
  static final List<String> DIALECTS = List.of("postgresql", "mariadb", "h2", "sqlserver");
  static final List<String> SCRIPTS = List.of("V1__inbox.sql");
  static final Pattern CREATE =
      Pattern.compile("CREATE\\s+(TABLE|INDEX)\\s+(\\w+)", Pattern.CASE_INSENSITIVE);
  static final Pattern COLUMN = Pattern.compile("^\\s+([a-z_0-9]+)\\s+[A-Z]", Pattern.MULTILINE);

  @Test
  void everyDatabaseHasTheSameTablesIndexesAndColumns() throws IOException {
    for (String script : SCRIPTS) {
      String pg = read("postgresql", script);
      for (String db : DIALECTS) {
        String sql = read(db, script);
        assertEquals(created(pg), created(sql), db + "/" + script + ": tables and indexes");
        assertEquals(columns(pg), columns(sql), db + "/" + script + ": columns");
      }
    }
    assertTrue(
        columns(read("postgresql", "V1__inbox.sql"))
            .containsAll(
                Set.of(
                    "destination",
                    "operation_id",
                    "payload_sha256",
                    "applied_at",
                    "deliveries",
                    "outcome")));
  }

  @Test
  void eachDialectMigratesFromItsOwnFolderWithItsOwnHistory() {
    for (String db : DIALECTS) {
      Dialect d = DialectDetector.forProductName(db);
      assertEquals(db, d.name());
      assertEquals("classpath:db/inbox/" + db, d.inboxMigrationLocation());
    }
    assertEquals("outbox_inbox_schema_history", InboxSchema.HISTORY_TABLE);
    assertFalse(
        InboxSchema.HISTORY_TABLE.equals(dev.outboxrelay.outbox.schema.OutboxSchema.HISTORY_TABLE));
  }

  private static String read(String db, String script) throws IOException {
    String path = "db/inbox/" + db + "/" + script;
    try (InputStream in = InboxScriptsTest.class.getClassLoader().getResourceAsStream(path)) {
      assertNotNull(in, path + " is missing");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).replaceAll("--[^\\n]*", "");
    }
  }

  private static Set<String> created(String sql) {
    Set<String> names = new LinkedHashSet<>();
    Matcher m = CREATE.matcher(sql);
    while (m.find()) {
      names.add(m.group(1).toUpperCase(Locale.ROOT) + " " + m.group(2).toLowerCase(Locale.ROOT));
    }
    return names;
  }

  private static Set<String> columns(String sql) {
    Set<String> names = new LinkedHashSet<>();
    Matcher m = COLUMN.matcher(sql);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }
}
