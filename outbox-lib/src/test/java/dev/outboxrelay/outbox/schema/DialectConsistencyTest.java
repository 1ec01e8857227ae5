package dev.outboxrelay.outbox.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Fast, database-free checks that every dialect has every statement the store runs, with the
 * parameters the store binds, naming only columns and indexes its own migration creates, and none
 * of another database's syntax: drift in a dialect that cannot run here (SQL Server) is caught
 * in every build. Relies on the dialects' convention of upper-case SQL words and lower-case
 * identifiers.
 */
class DialectConsistencyTest {
  /** Syntax each database does not have (or must not use: the session clock), as regexes. */
  private static final Map<String, List<String>> FOREIGN_SYNTAX = Map.of(
      "postgresql", List.of("SYSUTCDATETIME", "UTC_TIMESTAMP", "WITH \\(UPDLOCK", "\\bTOP \\(", "FINAL TABLE"),
      "h2", List.of("SYSUTCDATETIME", "UTC_TIMESTAMP", "WITH \\(UPDLOCK", "\\bTOP \\(", "ON CONFLICT"),
      "mariadb", List.of("SYSUTCDATETIME", "CURRENT_TIMESTAMP", "(?i)\\bnow\\(\\)", "INTERVAL '",
          "FINAL TABLE", "ON CONFLICT", "UPDATE [^;]*RETURNING", "::", "WITH \\(UPDLOCK", "\\bTOP \\("),
      "sqlserver", List.of("\\bLIMIT\\b", "FOR UPDATE", "SKIP LOCKED", "RETURNING", "INTERVAL",
          "CURRENT_TIMESTAMP", "UTC_TIMESTAMP", "(?i)\\bnow\\(\\)", "FINAL TABLE", "ON CONFLICT", "::",
          "MIN\\(CASE[^;]*COALESCE\\(\\(SELECT"));

  private static final Pattern IDENTIFIER = Pattern.compile("(?<![.\\w])([a-z_][a-z0-9_]*)\\b(?!\\s*[.(])");
  private static final Pattern QUALIFIED = Pattern.compile("\\.([a-z_][a-z0-9_]*)\\b");
  private static final Pattern DECLARED = Pattern.compile(
      "(?:\\bAS\\s+|\\bWITH\\s+|\\boutbox_message\\s+|\\boutbox_attempt\\s+|\\)\\s*)([a-z_][a-z0-9_]*)\\b");
  private static final Pattern INDEX_NAME = Pattern.compile("\\b(ix_[a-z0-9_]+)");
  private static final Pattern CREATE_INDEX =
      Pattern.compile("(?i)CREATE\\s+INDEX\\s+(\\w+)\\s+ON\\s+(\\w+)\\s*\\(([^)]*)\\)");

  @Test
  void everyDialectHasEveryStatementWithTheParametersTheStoreBinds() throws Exception {
    Map<String, String> reference = statements(dialect("postgresql"));
    assertEquals(16, reference.size(), "statements found: " + reference.keySet());
    for (String db : MigrationScriptsTest.DATABASES) {
      Map<String, String> statements = statements(dialect(db));
      assertEquals(reference.keySet(), statements.keySet(), db);
      for (var e : reference.entrySet()) {
        String sql = statements.get(e.getKey());
        assertFalse(sql == null || sql.isBlank(), db + " " + e.getKey() + " is empty");
        assertEquals(parameters(e.getValue()), parameters(sql),
            db + " " + e.getKey() + " binds another number of parameters than the store passes: " + sql);
      }
    }
  }

  @Test
  void everyDialectNamesOnlyColumnsAndIndexesOfItsOwnMigration() throws Exception {
    for (String db : MigrationScriptsTest.DATABASES) {
      Set<String> columns = new HashSet<>(MigrationScriptsTest.columns(db, "outbox_message"));
      columns.addAll(MigrationScriptsTest.columns(db, "outbox_attempt"));
      Set<String> indexes = indexes(db).keySet();
      for (var e : allSql(dialect(db)).entrySet()) {
        String sql = withoutLiterals(e.getValue());
        Set<String> declared = new HashSet<>(Set.of("outbox_message", "outbox_attempt"));
        Matcher d = DECLARED.matcher(sql);
        while (d.find()) {
          declared.add(d.group(1));
        }
        Set<String> unknown = new TreeSet<>();
        for (Pattern p : List.of(IDENTIFIER, QUALIFIED)) {
          Matcher m = p.matcher(sql);
          while (m.find()) {
            String name = m.group(1);
            if (name.startsWith("ix_")) {
              if (!indexes.contains(name)) {
                unknown.add("index " + name);
              }
            } else if (!columns.contains(name) && !declared.contains(name)) {
              unknown.add(name);
            }
          }
        }
        assertEquals(Set.of(), unknown, db + " " + e.getKey() + " names what its V1 migration lacks: "
            + e.getValue());
      }
    }
  }

  @Test
  void noDialectUsesAnotherDatabasesSyntaxOrClock() throws Exception {
    for (String db : MigrationScriptsTest.DATABASES) {
      for (var e : allSql(dialect(db)).entrySet()) {
        String sql = withoutLiterals(e.getValue());
        for (String foreign : FOREIGN_SYNTAX.get(db)) {
          assertFalse(Pattern.compile(foreign).matcher(sql).find(),
              db + " " + e.getKey() + " uses /" + foreign + "/, which " + db + " must not: " + e.getValue());
        }
      }
    }
  }

  /** The lease-queue contract of the SQL Server claim (seed 000), kept by text. */
  @Test
  void theSqlServerClaimKeepsItsIsolationContract() throws Exception {
    String claim = allSql(dialect("sqlserver")).get("CLAIM_SQL");
    for (String required : List.of("IF @@TRANCOUNT <> 0 OR (@@OPTIONS & 2) = 2", "THROW",
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "SELECT TOP (?)",
        "WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK)", "c.state = 'R'",
        "c.deliver_after <= SYSUTCDATETIME()", "ORDER BY c.id)", "UPDATE candidate SET state = 'W'",
        "OUTPUT inserted.id", "INTO @claimed", "SELECT " + OutboxDialect.CLAIM_COLUMNS + " FROM @claimed")) {
      assertTrue(claim.contains(required), "the SQL Server claim lacks '" + required + "': " + claim);
    }
    assertFalse(claim.contains("SNAPSHOT"), claim);
    assertEquals(3, parameters(claim), "limit, token, lease millis");
  }

  @Test
  void everyDatabaseHasTheReadyScanAndOrderingIndexes() throws IOException {
    for (String db : MigrationScriptsTest.DATABASES) {
      Map<String, String> indexes = indexes(db);
      assertEquals("outbox_message(state, deliver_after, id)", indexes.get("ix_outbox_message_due"), db);
      assertTrue(String.valueOf(indexes.get("ix_outbox_message_ordering")).startsWith("outbox_message(ordering_key, id"),
          db + ": " + indexes);
      assertTrue(indexes.containsKey("ix_outbox_message_ready") && indexes.containsKey("ix_outbox_message_lease")
          && indexes.containsKey("ix_outbox_attempt_message"), db + ": " + indexes);
    }
  }

  @Test
  void theCheckerSeesAColumnThatDoesNotExist() {
    String sql = withoutLiterals("UPDATE outbox_message m SET lease_untill = ? WHERE m.id = ? AND state = 'W'");
    Matcher m = IDENTIFIER.matcher(sql);
    List<String> found = new ArrayList<>();
    while (m.find()) {
      found.add(m.group(1));
    }
    assertEquals(List.of("outbox_message", "m", "lease_untill", "state"), found);
  }

  // ---- helpers -------------------------------------------------------------------------------

  private static OutboxDialect dialect(String db) {
    OutboxDialect d = DialectDetector.forProductName(db);
    assertEquals(db, d.name());
    return d;
  }

  /** Every public no-argument {@code *Sql()} statement of the dialect, by method name. */
  private static Map<String, String> statements(OutboxDialect dialect) throws Exception {
    Map<String, String> sql = new LinkedHashMap<>();
    for (Method m : OutboxDialect.class.getMethods()) {
      if (m.getName().endsWith("Sql") && m.getParameterCount() == 0 && m.getReturnType() == String.class) {
        sql.put(m.getName(), (String) m.invoke(dialect));
      }
    }
    return sql;
  }

  /** The statements plus the dialect's own SQL constants (its claim) and time fragments. */
  private static Map<String, String> allSql(OutboxDialect dialect) throws Exception {
    Map<String, String> sql = statements(dialect);
    for (Field f : dialect.getClass().getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
        f.setAccessible(true);
        sql.put(f.getName(), (String) f.get(null));
      }
    }
    for (String fragment : List.of("now", "nowPlusMillisParam")) {
      Method m = OutboxDialect.class.getDeclaredMethod(fragment);
      m.setAccessible(true);
      sql.put(fragment, (String) m.invoke(dialect));
    }
    return sql;
  }

  private static String withoutLiterals(String sql) {
    return sql.replaceAll("'[^']*'", "''").replaceAll("@+\\w+", "@VARIABLE");
  }

  private static int parameters(String sql) {
    return (int) withoutLiterals(sql).chars().filter(c -> c == '?').count();
  }

  /** Index name to {@code table(columns)} of {@code db}'s V1 migration. */
  private static Map<String, String> indexes(String db) throws IOException {
    Map<String, String> indexes = new LinkedHashMap<>();
    Matcher m = CREATE_INDEX.matcher(MigrationScriptsTest.script(db).replaceAll("--[^\\n]*", ""));
    while (m.find()) {
      indexes.put(m.group(1).toLowerCase(Locale.ROOT), m.group(2).toLowerCase(Locale.ROOT) + "("
          + m.group(3).strip().replaceAll("\\s*,\\s*", ", ").toLowerCase(Locale.ROOT) + ")");
    }
    if (indexes.isEmpty()) {
      fail("no CREATE INDEX in " + db);
    }
    return indexes;
  }
}
