package dev.outboxrelay.outbox.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.store.dialect.ReadyNotifications;
import java.io.IOException;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Validation of {@code outbox.schema} / {@code outbox.table}, and rendering SQL for them. */
class OutboxTablesTest {
  private static final OutboxTables ORDERS = OutboxTables.of("names_it", "orders");
  private static final String RULE = "[a-z_][a-z0-9_]*";

  @Test
  void theDefaultsAreTheDefaultTablesInTheConnectionsSchema() {
    assertSame(OutboxTables.DEFAULT, OutboxTables.of(Optional.empty(), "outbox"));
    assertTrue(OutboxTables.DEFAULT.isDefault());
    assertEquals(Optional.empty(), OutboxTables.DEFAULT.schema());
    assertEquals("outbox_schema_history", OutboxTables.DEFAULT.historyTable());
    assertEquals(OutboxSchema.HISTORY_TABLE, OutboxTables.DEFAULT.historyTable());
    assertEquals("outbox_ready", OutboxTables.DEFAULT.readyChannel());
    assertFalse(
        OutboxTables.of("public", "outbox").isDefault(), "an explicit schema is not the default");
    assertFalse(OutboxTables.of((String) null, "orders").isDefault());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "x;drop table y",
        "a b",
        "\"q\"",
        "x--",
        "x/*",
        "*/x",
        "Outbox",
        "ORDERS",
        "",
        " outbox",
        "outbox ",
        "1outbox",
        "x'y",
        "x`y",
        "[x]",
        "x.y",
        "x-y",
        "x\ny",
        "x\u0000",
        "x\\y",
        "ordérs",
        "ｏutbox",
        "x\u200by",
        "x$y",
        "x#y",
        "x@y",
        "x()",
        "abcdefghijabcdefghijabcdefghijk"
      })
  void aHostileTableNameIsRejectedNamingTheKeyTheValueAndTheRule(String table) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> OutboxTables.of(Optional.empty(), table));
    assertTrue(e.getMessage().startsWith("outbox.table='"), e.getMessage());
    assertTrue(
        e.getMessage().contains(RULE) && e.getMessage().contains("at most 30"), e.getMessage());
    if (table.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
      assertTrue(e.getMessage().contains("'" + table + "'"), e.getMessage());
    } else {
      // Control and non-ASCII characters are shown escaped, never raw in a log line.
      assertTrue(e.getMessage().contains("\\u"), e.getMessage());
      assertFalse(
          e.getMessage().contains("\n") || e.getMessage().contains("\u0000"), e.getMessage());
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "x;drop table y",
        "a b",
        "\"q\"",
        "x--",
        "x/*",
        "Names",
        "",
        "x.y",
        "ünï",
        "public;",
        "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd"
      })
  void aHostileSchemaIsRejectedNamingTheKeyTheValueAndTheRule(String schema) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> OutboxTables.of(Optional.of(schema), "outbox"));
    assertTrue(e.getMessage().startsWith("outbox.schema='"), e.getMessage());
    assertTrue(
        e.getMessage().contains(RULE) && e.getMessage().contains("at most 63"), e.getMessage());
  }

  @Test
  void aReservedWordIsNoSchemaAndAMissingTableIsNamed() {
    IllegalArgumentException reserved =
        assertThrows(IllegalArgumentException.class, () -> OutboxTables.of("select", "outbox"));
    assertTrue(
        reserved.getMessage().contains("outbox.schema='select'")
            && reserved.getMessage().contains("reserved"),
        reserved.getMessage());
    IllegalArgumentException missing =
        assertThrows(IllegalArgumentException.class, () -> OutboxTables.of(Optional.empty(), null));
    assertTrue(missing.getMessage().startsWith("outbox.table must be set"), missing.getMessage());
  }

  @Test
  void theLongestNamesAndUnderscoresAreAccepted() {
    String table = "t".repeat(OutboxTables.MAX_TABLE_LENGTH);
    String schema = "s".repeat(OutboxTables.MAX_SCHEMA_LENGTH);
    OutboxTables longest = OutboxTables.of(schema, table);
    assertEquals(table, longest.table());
    assertEquals(Optional.of(schema), longest.schema());
    assertEquals("_x_9", OutboxTables.of("_s", "_x_9").table());
  }

  @Test
  void renderingQualifiesTablesAndFunctionsAndRenamesObjectsAndTheChannel() {
    String sql =
        "CREATE INDEX ix_outbox_message_due ON outbox_message (state);"
            + " SELECT a.id FROM outbox_attempt a JOIN outbox_reconciliation_item i ON 1 = 1;"
            + " ALTER TABLE outbox_payload ADD CONSTRAINT fk_outbox_payload_message FOREIGN KEY (message_id)"
            + " REFERENCES outbox_message (id); PERFORM pg_notify('outbox_ready', TG_TABLE_SCHEMA);"
            + " EXECUTE FUNCTION outbox_notify_ready(); -- the outbox and outbox_lock";
    assertEquals(
        "CREATE INDEX ix_orders_message_due ON names_it.orders_message (state);"
            + " SELECT a.id FROM names_it.orders_attempt a JOIN names_it.orders_reconciliation_item i ON 1 = 1;"
            + " ALTER TABLE names_it.orders_payload ADD CONSTRAINT fk_orders_payload_message FOREIGN KEY"
            + " (message_id) REFERENCES names_it.orders_message (id); PERFORM pg_notify('orders_ready',"
            + " TG_TABLE_SCHEMA); EXECUTE FUNCTION names_it.orders_notify_ready(); -- the outbox and"
            + " names_it.orders_lock",
        ORDERS.render(sql));
    assertEquals(
        "SELECT 1 FROM orders_message",
        OutboxTables.of((String) null, "orders").render("SELECT 1 FROM outbox_message"),
        "no schema: unqualified");
  }

  @Test
  void aTableBaseStartingWithOutboxRendersOnce() {
    OutboxTables v2 = OutboxTables.of((String) null, "outbox_v2");
    assertEquals(
        "CREATE INDEX ix_outbox_v2_message_due ON outbox_v2_message (id)",
        v2.render("CREATE INDEX ix_outbox_message_due ON outbox_message (id)"));
    // Rendered text is not SQL to render again: its names are no longer known default names.
    assertThrows(
        IllegalStateException.class, () -> v2.render(v2.render("SELECT 1 FROM outbox_message")));
    assertEquals(
        "SELECT 1 FROM outbox_message",
        OutboxTables.of((String) null, "outbox").render("SELECT 1 FROM outbox_message"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "SELECT * FROM outbox_unknown",
        "CREATE INDEX ix_outbox_unknown ON t (a)",
        "SELECT * FROM outbox_messages",
        "SELECT * FROM my_outbox_message",
        "SELECT * FROM OUTBOX_MESSAGE",
        "SELECT * FROM Outbox_Message",
        "SELECT * FROM xoutbox_message",
        "SELECT * FROM outbox_",
        "CREATE INDEX zz_outbox_message_due ON t (a)"
      })
  void renderingRefusesAnOutboxNameItDoesNotKnow(String sql) {
    for (OutboxTables tables : new OutboxTables[] {ORDERS, OutboxTables.DEFAULT}) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> tables.render(sql));
      assertTrue(e.getMessage().startsWith("unknown outbox name"), e.getMessage());
    }
  }

  /** PostgreSQL's wake-up: the rendered V4 trigger notifies where the rendered listener listens. */
  @Test
  void theRenamedTriggerNotifiesOnTheChannelTheRenamedListenerListensOn() throws IOException {
    ReadyNotifications defaults =
        DialectDetector.forProductName("PostgreSQL").readyNotifications().orElseThrow();
    assertSame(defaults, defaults.forTables(OutboxTables.DEFAULT));
    ReadyNotifications named = defaults.forTables(ORDERS);
    assertEquals("orders_ready", named.channel());
    assertEquals("LISTEN orders_ready", named.listenSql());
    // The trigger's payload is its table's schema, not the listening connection's.
    assertEquals("SELECT CAST('names_it' AS VARCHAR(63))", named.currentSchemaSql());
    assertEquals(
        defaults.currentSchemaSql(),
        defaults.forTables(OutboxTables.of((String) null, "orders")).currentSchemaSql());
    String v4 =
        ORDERS.render(
            MigrationScriptsTest.allScripts("postgresql").stream()
                .filter(sql -> sql.contains("pg_notify"))
                .findFirst()
                .orElseThrow());
    assertTrue(v4.contains("pg_notify('orders_ready', TG_TABLE_SCHEMA)"), v4);
    assertTrue(
        v4.contains(
            "CREATE TRIGGER tr_orders_message_ready AFTER INSERT ON names_it.orders_message"),
        v4);
    assertTrue(v4.contains("EXECUTE FUNCTION names_it.orders_notify_ready()"), v4);
  }

  @Test
  void renderingWithTheDefaultsIsTheIdentityOnEveryMigration() throws IOException {
    for (String db : MigrationScriptsTest.DATABASES) {
      for (String script : MigrationScriptsTest.allScripts(db)) {
        assertEquals(script, OutboxTables.DEFAULT.render(script), db);
      }
    }
  }

  /**
   * Every name a migration derives from the longest table base stays within PostgreSQL's 63
   * characters (a longer one would be silently truncated there, and could collide).
   */
  @Test
  void everyRenderedNameOfTheLongestTableFitsPostgresql() throws IOException {
    OutboxTables longest =
        OutboxTables.of((String) null, "t".repeat(OutboxTables.MAX_TABLE_LENGTH));
    Pattern name = Pattern.compile("\\b(\\w*" + longest.table() + "\\w*)\\b");
    TreeSet<String> names = new TreeSet<>();
    for (String db : MigrationScriptsTest.DATABASES) {
      for (String script : MigrationScriptsTest.allScripts(db)) {
        Matcher m = name.matcher(longest.render(script));
        while (m.find()) {
          names.add(m.group(1));
        }
      }
    }
    assertTrue(names.size() > 30, "names found: " + names);
    for (String n : names) {
      assertTrue(n.length() <= 63, n + " has " + n.length() + " characters");
    }
  }
}
