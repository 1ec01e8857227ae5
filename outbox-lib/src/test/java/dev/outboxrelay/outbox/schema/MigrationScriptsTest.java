package dev.outboxrelay.outbox.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The migration scripts of every database describe the same tables, and hold every column the
 * dialects' SQL names. Parses {@code CREATE TABLE} text simply: one column per top-level comma.
 */
class MigrationScriptsTest {
  static final List<String> DATABASES = List.of("postgresql", "h2", "mariadb", "sqlserver");

  /** Every script, in order; a table's columns are its CREATE TABLE plus later ADD COLUMNs. */
  static final List<String> SCRIPTS =
      List.of(
          "V1__outbox_tables.sql",
          "V2__outbox_payload.sql",
          "V3__reconciliation.sql",
          "V6__key_head.sql",
          "V7__attempt_relay_instance.sql",
          "V8__ready_index.sql",
          "V9__attempt_without_foreign_key.sql");

  private static final Set<String> TABLE_CONSTRAINT_WORDS =
      Set.of("constraint", "primary", "unique", "check", "foreign", "exclude");

  @Test
  void everyDatabaseCreatesTheSameMessageColumns() throws IOException {
    Set<String> postgres = columns("postgresql", "outbox_message");
    for (String db : DATABASES) {
      assertEquals(new TreeSet<>(postgres), new TreeSet<>(columns(db, "outbox_message")), db);
    }
    assertEquals(19, postgres.size(), "columns: " + postgres);
  }

  @Test
  void everyDatabaseCreatesTheSamePayloadColumns() throws IOException {
    for (String db : DATABASES) {
      assertEquals(
          Set.of("message_id", "body", "size_bytes", "sha256"), columns(db, "outbox_payload"), db);
    }
  }

  @Test
  void theParserReadsAddedColumns() {
    String v1 = "CREATE TABLE t (\n  a INT,\n  b INT\n);";
    String v2 =
        "ALTER TABLE t ADD COLUMN c BOOLEAN NOT NULL DEFAULT FALSE;\nALTER TABLE u ADD COLUMN d INT;";
    assertEquals(Set.of("a", "b", "c"), columnsOf(List.of(v1, v2), "t"));
    // T-SQL has no COLUMN keyword; ADD CONSTRAINT adds none.
    String tsql =
        "ALTER TABLE t ADD c BIT NOT NULL CONSTRAINT df_c DEFAULT 0;\n"
            + "ALTER TABLE t ADD CONSTRAINT ck_a CHECK (a > 0);";
    assertEquals(Set.of("a", "b", "c"), columnsOf(List.of(v1, tsql), "t"));
  }

  @Test
  void everyDatabaseCreatesTheSameAttemptColumns() throws IOException {
    Set<String> postgres = columns("postgresql", "outbox_attempt");
    for (String db : DATABASES) {
      assertEquals(new TreeSet<>(postgres), new TreeSet<>(columns(db, "outbox_attempt")), db);
    }
    assertEquals(
        Set.of(
            "id",
            "message_id",
            "attempt_no",
            "claim_token",
            "started_at",
            "finished_at",
            "outcome",
            "error_class",
            "error_message",
            "response_summary",
            "relay_instance"),
        postgres);
  }

  @Test
  void theScriptsHoldEveryColumnTheDialectsName() throws IOException {
    for (String db : DATABASES) {
      Set<String> columns = columns(db, "outbox_message");
      for (String listed : List.of(Dialect.MESSAGE_COLUMNS, Dialect.CLAIM_COLUMNS)) {
        for (String column : split(listed)) {
          assertTrue(
              columns.contains(column), db + " has no outbox_message column '" + column + "'");
        }
      }
    }
  }

  @Test
  void messageColumnsListEveryColumnOfTheTable() throws IOException {
    assertEquals(
        new TreeSet<>(columns("postgresql", "outbox_message")),
        new TreeSet<>(split(Dialect.MESSAGE_COLUMNS)),
        "MESSAGE_COLUMNS is documented as every column of outbox_message");
  }

  /**
   * Only PostgreSQL notifies relays of committed jobs (V4, a trigger calling pg_notify); the others
   * have no V4 and relays poll them. The channel is the one its dialect listens on.
   */
  @Test
  void onlyPostgresqlNotifiesOnTheChannelItsDialectListensOn() throws IOException {
    String pg = postgresqlOnly("V4__ready_notification.sql");
    String channel =
        DialectDetector.forProductName("PostgreSQL").readyNotifications().orElseThrow().channel();
    assertTrue(pg.contains("pg_notify('" + channel + "'"), pg);
    assertTrue(
        pg.matches("(?is).*AFTER\\s+INSERT\\s+ON\\s+outbox_message\\s+FOR\\s+EACH\\s+STATEMENT.*"),
        "one notification per statement, not per row: " + pg);
    for (String product : List.of("H2", "MariaDB", "Microsoft SQL Server")) {
      assertTrue(DialectDetector.forProductName(product).readyNotifications().isEmpty(), product);
    }
  }

  /**
   * PostgreSQL only (V5): the trigger notifies only when no other transaction of the outbox's
   * schema is notifying (a non-waiting advisory lock), so notifying commits do not queue on
   * PostgreSQL's one notify lock; it still notifies on the channel its dialect listens on.
   */
  @Test
  void onlyPostgresqlThrottlesItsNotificationsWithoutWaiting() throws IOException {
    String pg = postgresqlOnly("V5__ready_notification_throttle.sql");
    String channel =
        DialectDetector.forProductName("PostgreSQL").readyNotifications().orElseThrow().channel();
    String code = pg.replaceAll("--[^\\n]*", "");
    assertTrue(
        code.contains("pg_try_advisory_xact_lock(") && !code.contains("pg_advisory_xact_lock("),
        "never waits for the lock: " + pg);
    assertTrue(
        code.contains("TG_TABLE_SCHEMA") && code.contains("pg_notify('" + channel + "'"), pg);
  }

  /**
   * V7 adds the attempt's relay instance on every database, as a nullable column (attempts recorded
   * before it, and those no relay made, have none), and Flyway finds it without a V6 there;
   * PostgreSQL also gets the partial index its dead-job listings walk.
   */
  @Test
  void everyDatabaseAddsTheNullableRelayInstanceInV7() throws IOException {
    for (String db : DATABASES) {
      String v7 = read("db/outbox/" + db + "/V7__attempt_relay_instance.sql");
      assertNotNull(v7, db);
      String code = v7.replaceAll("--[^\n]*", "");
      assertTrue(
          Pattern.compile(
                  "(?is)ALTER\\s+TABLE\\s+outbox_attempt\\s+ADD\\s+(COLUMN\\s+)?relay_instance"
                      + "\\s+N?VARCHAR\\(200\\);")
              .matcher(code)
              .find(),
          db + ": " + v7);
      assertEquals(
          db.equals("postgresql"),
          code.contains(
              "CREATE INDEX ix_outbox_message_dead ON outbox_message (id)" + " WHERE state = 'D'"),
          db + ": only PostgreSQL has partial indexes for the dead-job lists");
      assertTrue(
          OutboxSchema.scriptNames(DialectDetector.forProductName(db))
              .contains("V7__attempt_relay_instance.sql"),
          db);
    }
  }

  /**
   * V8 drops the deliver_after index on every database; PostgreSQL also folds its partial index of
   * ready rows into one of ready and leased rows by (state, id), which the backlog gauges need once
   * the deliver_after index is gone (without it they read the whole table, history included).
   */
  @Test
  void everyDatabaseDropsTheDueIndexInV8() throws IOException {
    for (String db : DATABASES) {
      String v8 = read("db/outbox/" + db + "/V8__ready_index.sql");
      assertNotNull(v8, db);
      String code = v8.replaceAll("--[^\n]*", "").strip();
      if (db.equals("postgresql")) {
        assertEquals(
            "DROP INDEX ix_outbox_message_due;\nDROP INDEX ix_outbox_message_ready;\n"
                + "CREATE INDEX ix_outbox_message_ready ON outbox_message (state, id)"
                + " WHERE state IN ('R', 'W');",
            code);
      } else {
        assertTrue(code.startsWith("DROP INDEX ix_outbox_message_due"), db + ": " + code);
        assertFalse(code.contains("CREATE"), db + ": " + code);
      }
      assertTrue(
          OutboxSchema.scriptNames(DialectDetector.forProductName(db))
              .contains("V8__ready_index.sql"),
          db);
    }
  }

  /**
   * The text of PostgreSQL's {@code script}, asserting that no other database has that migration.
   */
  private static String postgresqlOnly(String script) throws IOException {
    String pg = read("db/outbox/postgresql/" + script);
    assertNotNull(pg, "missing postgresql " + script);
    for (String db : List.of("h2", "mariadb", "sqlserver")) {
      assertEquals(null, read("db/outbox/" + db + "/" + script), db + " has no notifications");
    }
    return pg;
  }

  private static String read(String path) throws IOException {
    try (InputStream in = MigrationScriptsTest.class.getClassLoader().getResourceAsStream(path)) {
      return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void theParserReadsNestedParenthesesAndConstraints() {
    String sql =
        "-- comment, with a comma\nCREATE TABLE t (\n  a VARCHAR(10) NOT NULL,\n"
            + "  b NUMERIC(10, 2),\n  CONSTRAINT ck CHECK (a IN ('x', 'y')),\n  PRIMARY KEY (a)\n);";
    assertEquals(Set.of("a", "b"), columnsOf(sql, "t"));
  }

  // ---- parsing -------------------------------------------------------------------------------

  /**
   * Columns of {@code table} after every migration Flyway finds for {@code db}, gaps in the version
   * numbers included (a database may skip a version another one has).
   */
  static Set<String> columns(String db, String table) throws IOException {
    return columnsOf(allScripts(db), table);
  }

  /** The text of {@code db}'s migrations (V1, V2, V3), joined in order. */
  static String script(String db) throws IOException {
    return String.join("\n", scripts(db));
  }

  /** The text of each of {@code db}'s migrations, in order. */
  static List<String> scripts(String db) throws IOException {
    List<String> scripts = new ArrayList<>();
    for (String script : SCRIPTS) {
      String path = "db/outbox/" + db + "/" + script;
      try (InputStream in = MigrationScriptsTest.class.getClassLoader().getResourceAsStream(path)) {
        assertNotNull(in, "missing migration " + path);
        scripts.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      }
    }
    return scripts;
  }

  /** Every script Flyway finds for {@code db} (V4 too, where there is one), in version order. */
  static List<String> allScripts(String db) throws IOException {
    List<String> scripts = new ArrayList<>();
    List<String> names =
        OutboxSchema.scriptNames(
            dev.outboxrelay.outbox.store.dialect.DialectDetector.forProductName(db));
    assertTrue(names.containsAll(SCRIPTS), db + ": " + names);
    for (String script : names) {
      scripts.add(read("db/outbox/" + db + "/" + script));
    }
    return scripts;
  }

  /** Columns of {@code table} after running {@code scripts} in order: created, then added. */
  static Set<String> columnsOf(List<String> scripts, String table) {
    Set<String> columns = null;
    Pattern create =
        Pattern.compile(
            "(?i)CREATE\\s+TABLE\\s+(IF\\s+NOT\\s+EXISTS\\s+)?" + Pattern.quote(table) + "\\s*\\(");
    Pattern add =
        Pattern.compile(
            "(?i)ALTER\\s+TABLE\\s+"
                + Pattern.quote(table)
                + "\\s+ADD\\s+(COLUMN\\s+)?(IF\\s+NOT\\s+EXISTS\\s+)?\"?(\\w+)");
    for (String sql : scripts) {
      String text = sql.replaceAll("--[^\n]*", "");
      if (columns == null && create.matcher(text).find()) {
        columns = columnsOf(text, table);
      }
      Matcher m = add.matcher(text);
      while (m.find()) {
        String column = m.group(3).toLowerCase(Locale.ROOT);
        if (m.group(1) == null && TABLE_CONSTRAINT_WORDS.contains(column)) {
          continue; // ADD CONSTRAINT ..., not a column
        }
        assertNotNull(columns, "ADD COLUMN before CREATE TABLE " + table);
        columns.add(column);
      }
    }
    assertNotNull(columns, "no CREATE TABLE " + table);
    return columns;
  }

  /** Column names of {@code CREATE TABLE table (...)} in {@code sql}, lower case, in order. */
  static Set<String> columnsOf(String sql, String table) {
    String text = sql.replaceAll("--[^\n]*", "");
    Matcher m =
        Pattern.compile(
                "(?i)CREATE\\s+TABLE\\s+(IF\\s+NOT\\s+EXISTS\\s+)?"
                    + Pattern.quote(table)
                    + "\\s*\\(")
            .matcher(text);
    assertTrue(m.find(), "no CREATE TABLE " + table);
    List<String> items = new ArrayList<>();
    int depth = 1;
    StringBuilder item = new StringBuilder();
    for (int i = m.end(); depth > 0; i++) {
      char ch = text.charAt(i);
      if (ch == '(') {
        depth++;
      } else if (ch == ')') {
        depth--;
      }
      if ((ch == ',' && depth == 1) || depth == 0) {
        items.add(item.toString().strip());
        item.setLength(0);
      } else {
        item.append(ch);
      }
    }
    Set<String> columns = new LinkedHashSet<>();
    for (String definition : items) {
      String first = definition.split("\\s+", 2)[0].toLowerCase(Locale.ROOT).replace("\"", "");
      if (!first.isEmpty() && !TABLE_CONSTRAINT_WORDS.contains(first)) {
        columns.add(first);
      }
    }
    return columns;
  }

  private static List<String> split(String columnList) {
    return Arrays.stream(columnList.split(",")).map(String::strip).toList();
  }
}
