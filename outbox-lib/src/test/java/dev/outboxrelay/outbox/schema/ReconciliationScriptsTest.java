package dev.outboxrelay.outbox.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.dialect.Dialect;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * V3 (reconciliation) creates the same tables on all four databases, with the columns the dialect
 * names.
 */
class ReconciliationScriptsTest {
  private static final List<String> DATABASES = MigrationScriptsTest.DATABASES;
  private static final String SCRIPT = "V3__reconciliation.sql";
  private static final List<String> TABLES =
      List.of(
          "outbox_confirmation",
          "outbox_reconciliation_run",
          "outbox_reconciliation_item",
          "outbox_lock");

  @Test
  void everyDatabaseCreatesTheSameReconciliationTables() throws IOException {
    for (String table : TABLES) {
      Set<String> postgres = MigrationScriptsTest.columnsOf(script("postgresql"), table);
      for (String db : DATABASES) {
        assertEquals(
            new TreeSet<>(postgres),
            new TreeSet<>(MigrationScriptsTest.columnsOf(script(db), table)),
            db + " " + table);
      }
    }
    assertEquals(
        Set.of(
            "id",
            "operation_id",
            "destination",
            "confirmed_at",
            "applied_count",
            "source",
            "recorded_at"),
        MigrationScriptsTest.columnsOf(script("postgresql"), "outbox_confirmation"));
    assertEquals(
        Set.of("name", "owner", "lease_until", "acquired_at"),
        MigrationScriptsTest.columnsOf(script("postgresql"), "outbox_lock"));
  }

  @Test
  void runColumnsListEveryColumnOfTheRunTable() throws IOException {
    for (String db : DATABASES) {
      assertEquals(
          new TreeSet<>(MigrationScriptsTest.columnsOf(script(db), "outbox_reconciliation_run")),
          new TreeSet<>(Arrays.stream(Dialect.RUN_COLUMNS.split(",")).map(String::strip).toList()),
          db);
    }
  }

  @Test
  void itemTableHoldsEveryReportField() throws IOException {
    for (String db : DATABASES) {
      Set<String> columns =
          MigrationScriptsTest.columnsOf(script(db), "outbox_reconciliation_item");
      for (String field :
          List.of(
              "run_id",
              "operation_id",
              "message_id",
              "destination",
              "state",
              "category",
              "sent_at",
              "confirmed_count",
              "last_error",
              "action")) {
        assertTrue(columns.contains(field), db + " outbox_reconciliation_item lacks " + field);
      }
    }
  }

  private static String script(String db) throws IOException {
    String path = "db/outbox/" + db + "/" + SCRIPT;
    try (InputStream in =
        ReconciliationScriptsTest.class.getClassLoader().getResourceAsStream(path)) {
      assertNotNull(in, "missing migration " + path);
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
