package dev.outboxrelay.outbox.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.outboxrelay.outbox.store.dialect.AdminStatements;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.JobStatements;
import dev.outboxrelay.outbox.store.dialect.Listing;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.store.dialect.ReconciliationStatements;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Fast, database-free checks that every dialect has every statement the store runs, with the
 * parameters the store binds, naming only columns and indexes its own migration creates, and none
 * of another database's syntax: drift in a dialect that cannot run here (SQL Server) is caught in
 * every build. Relies on the dialects' convention of upper-case SQL words and lower-case
 * identifiers.
 */
class DialectConsistencyTest {
  /** Syntax each database does not have (or must not use: the session clock), as regexes. */
  private static final Map<String, List<String>> FOREIGN_SYNTAX =
      Map.of(
          "postgresql",
              List.of(
                  "SYSUTCDATETIME",
                  "UTC_TIMESTAMP",
                  "WITH \\(UPDLOCK",
                  "\\bTOP \\(",
                  "FINAL TABLE",
                  "ON DUPLICATE KEY",
                  "\\bFETCH NEXT"),
          "h2",
              List.of(
                  "SYSUTCDATETIME",
                  "UTC_TIMESTAMP",
                  "WITH \\(UPDLOCK",
                  "\\bTOP \\(",
                  "ON CONFLICT",
                  "ON DUPLICATE KEY"),
          "mariadb",
              List.of(
                  "SYSUTCDATETIME",
                  "CURRENT_TIMESTAMP",
                  "(?i)\\bnow\\(\\)",
                  "INTERVAL '",
                  "FINAL TABLE",
                  "ON CONFLICT",
                  "UPDATE [^;]*RETURNING",
                  "::",
                  "WITH \\(UPDLOCK",
                  "\\bTOP \\(",
                  "\\bMERGE\\b",
                  "\\bFETCH NEXT",
                  "CAST\\(NULL AS (BIGINT|VARCHAR)",
                  // error 1235: no LIMIT inside IN (...); error 1093: no sub-query on the updated
                  // table
                  "\\bIN \\(SELECT [^;]*\\bLIMIT\\b",
                  "UPDATE outbox_message SET [^;]*IN \\(SELECT [^;]*FROM outbox_message"),
          "sqlserver",
              List.of(
                  "\\bLIMIT\\b",
                  "FOR UPDATE",
                  "SKIP LOCKED",
                  "RETURNING",
                  "INTERVAL",
                  "CURRENT_TIMESTAMP",
                  "UTC_TIMESTAMP",
                  "(?i)\\bnow\\(\\)",
                  "FINAL TABLE",
                  "ON CONFLICT",
                  "::",
                  "MIN\\(CASE[^;]*COALESCE\\(\\(SELECT",
                  "ON DUPLICATE KEY",
                  "\\bTRUE\\b",
                  "\\bFALSE\\b"));

  /** Every table of the migrations (V1 to V3, V6). */
  private static final List<String> TABLES =
      List.of(
          "outbox_message",
          "outbox_attempt",
          "outbox_payload",
          "outbox_confirmation",
          "outbox_reconciliation_run",
          "outbox_reconciliation_item",
          "outbox_lock");

  private static final Pattern IDENTIFIER =
      Pattern.compile("(?<![.\\w])([a-z_][a-z0-9_]*)\\b(?!\\s*[.(])");
  private static final Pattern QUALIFIED = Pattern.compile("\\.([a-z_][a-z0-9_]*)\\b");
  private static final Pattern DECLARED =
      Pattern.compile(
          "(?:\\bAS\\s+|\\bWITH\\s+|\\boutbox_[a-z_]+\\s+|\\)\\s*)([a-z_][a-z0-9_]*)\\b");
  private static final Pattern INDEX_NAME = Pattern.compile("\\b(ix_[a-z0-9_]+)");

  /** A CREATE INDEX (name, table, columns) or a DROP INDEX (name), in script order. */
  private static final Pattern CREATE_INDEX =
      Pattern.compile(
          "(?i)CREATE\\s+INDEX\\s+(\\w+)\\s+ON\\s+(\\w+)\\s*\\(([^)]*)\\)"
              + "|DROP\\s+INDEX\\s+(\\w+)");

  @Test
  void everyDialectHasEveryStatementWithTheParametersTheStoreBinds() throws Exception {
    Map<String, String> reference = outboxStatements(dialect("postgresql"));
    assertEquals(31, reference.size(), "statements found: " + reference.keySet());
    for (String db : MigrationScriptsTest.DATABASES) {
      Map<String, String> statements = outboxStatements(dialect(db));
      assertEquals(reference.keySet(), statements.keySet(), db);
      for (var e : reference.entrySet()) {
        String sql = statements.get(e.getKey());
        assertFalse(sql == null || sql.isBlank(), db + " " + e.getKey() + " is empty");
        assertEquals(
            parameters(e.getValue()),
            parameters(sql),
            db
                + " "
                + e.getKey()
                + " binds another number of parameters than the store passes: "
                + sql);
      }
    }
  }

  @Test
  void everyReconciliationDialectHasEveryStatementWithTheSameParameters() throws Exception {
    Map<String, String> reference =
        statements(dialect("postgresql").reconciliation(OutboxTables.DEFAULT));
    assertEquals(20, reference.size(), "statements found: " + reference.keySet());
    for (String db : MigrationScriptsTest.DATABASES) {
      ReconciliationStatements reconciliation = dialect(db).reconciliation(OutboxTables.DEFAULT);
      assertEquals(db, reconciliation.dialect().name());
      Map<String, String> statements = statements(reconciliation);
      assertEquals(reference.keySet(), statements.keySet(), db);
      for (var e : reference.entrySet()) {
        String sql = statements.get(e.getKey());
        assertFalse(sql == null || sql.isBlank(), db + " " + e.getKey() + " is empty");
        assertEquals(
            parameters(e.getValue()),
            parameters(sql),
            db + " reconciliation " + e.getKey() + " binds another number of parameters: " + sql);
      }
    }
  }

  /** The operator statements built per filter bind exactly the parameters they list. */
  @Test
  void everyBuiltStatementBindsTheParametersItLists() throws Exception {
    for (String db : MigrationScriptsTest.DATABASES) {
      for (var e : builtSql(dialect(db)).entrySet()) {
        assertEquals(
            e.getValue().params().size(),
            parameters(e.getValue().sql()),
            db + " " + e.getKey() + ": " + e.getValue().sql());
      }
    }
  }

  @Test
  void everyDialectNamesOnlyColumnsAndIndexesOfItsOwnMigration() throws Exception {
    for (String db : MigrationScriptsTest.DATABASES) {
      Set<String> columns = new HashSet<>();
      for (String table : TABLES) {
        columns.addAll(MigrationScriptsTest.columns(db, table));
      }
      Set<String> indexes = indexes(db).keySet();
      for (var e : allSql(dialect(db)).entrySet()) {
        String sql = withoutLiterals(e.getValue());
        Set<String> declared = new HashSet<>(TABLES);
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
        assertEquals(
            Set.of(),
            unknown,
            db + " " + e.getKey() + " names what its migrations lack: " + e.getValue());
      }
    }
  }

  @Test
  void noDialectUsesAnotherDatabasesSyntaxOrClock() throws Exception {
    for (String db : MigrationScriptsTest.DATABASES) {
      for (var e : allSql(dialect(db)).entrySet()) {
        String sql = withoutLiterals(e.getValue());
        for (String foreign : FOREIGN_SYNTAX.get(db)) {
          assertFalse(
              Pattern.compile(foreign).matcher(sql).find(),
              db
                  + " "
                  + e.getKey()
                  + " uses /"
                  + foreign
                  + "/, which "
                  + db
                  + " must not: "
                  + e.getValue());
        }
      }
    }
  }

  /** The lease-queue contract of the SQL Server claim (seed 000), kept by text. */
  @Test
  void theSqlServerClaimKeepsItsIsolationContract() throws Exception {
    String claim = allSql(dialect("sqlserver")).get("CLAIM_SQL");
    for (String required :
        List.of(
            "IF @@TRANCOUNT <> 0 OR (@@OPTIONS & 2) = 2",
            "THROW",
            "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SELECT TOP (?)",
            "WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK)",
            "c.state = 'R'",
            "c.deliver_after <= SYSUTCDATETIME()",
            "ORDER BY c.id)",
            "UPDATE candidate SET state = 'W'",
            "OUTPUT inserted.id",
            "INTO @claimed",
            "SELECT " + Dialect.CLAIM_COLUMNS + " FROM @claimed")) {
      assertTrue(
          claim.contains(required), "the SQL Server claim lacks '" + required + "': " + claim);
    }
    assertFalse(claim.contains("SNAPSHOT"), claim);
    assertEquals(3, parameters(claim), "limit, token, lease millis");
  }

  /**
   * Retention on SQL Server: small batches picked under row locks held for the delete by id,
   * skipping locked rows (README), then the attempts of the jobs deleted.
   */
  @Test
  void theSqlServerRetentionDeletesSmallBatchesUnderRowLocks() {
    JobStatements jobs = dialect("sqlserver").jobs(OutboxTables.DEFAULT);
    BoundSql pick = jobs.pickFinished(1000, 500);
    assertTrue(
        pick.sql()
            .startsWith(
                "SELECT TOP (?) f.id FROM outbox_message f WITH (UPDLOCK, ROWLOCK, READPAST) WHERE"),
        pick.sql());
    assertEquals(List.of(500, -1000L), pick.params(), "TOP first, then the cutoff");
    BoundSql delete = jobs.deleteFinished(List.of(7L, 9L), 1000);
    assertTrue(delete.sql().startsWith("DELETE FROM outbox_message WHERE id IN (?, ?) AND"));
    assertEquals(List.of(7L, 9L, -1000L), delete.params(), "the ids, then the cutoff");
    BoundSql attempts = jobs.deleteAttemptsOfDeleted(List.of(7L, 9L));
    assertTrue(attempts.sql().contains("NOT EXISTS"), attempts.sql());
    assertEquals(List.of(7L, 9L), attempts.params());
  }

  /**
   * A MERGE is not atomic by itself: two upserts of a new confirmation could both miss the match
   * and one fail on the unique key. HOLDLOCK keeps the key range from the match to the insert.
   */
  @Test
  void theSqlServerUpsertHoldsItsKeyRange() {
    String upsert =
        dialect("sqlserver").reconciliation(OutboxTables.DEFAULT).upsertConfirmationSql();
    assertTrue(upsert.startsWith("MERGE INTO outbox_confirmation WITH (HOLDLOCK)"), upsert);
    assertTrue(upsert.endsWith(";"), "a MERGE must end with a semicolon: " + upsert);
  }

  @Test
  void everyDatabaseHasTheReadyAndOrderingIndexes() throws IOException {
    for (String db : MigrationScriptsTest.DATABASES) {
      Map<String, String> indexes = indexes(db);
      // Since V8: no statement seeks on deliver_after; unfinished jobs by state in id order.
      assertFalse(indexes.containsKey("ix_outbox_message_due"), db + ": " + indexes);
      assertEquals("outbox_message(state, id)", indexes.get("ix_outbox_message_ready"), db);
      // (ordering_key, id) partial on unfinished rows (PostgreSQL), else (ordering_key, state, id)
      // since V6.
      assertTrue(
          String.valueOf(indexes.get("ix_outbox_message_ordering"))
                  .startsWith("outbox_message(ordering_key, ")
              && String.valueOf(indexes.get("ix_outbox_message_ordering")).endsWith("id)"),
          db + ": " + indexes);
      assertTrue(
          String.valueOf(indexes.get("ix_outbox_message_head"))
              .matches("outbox_message\\((state, key_wait, )?id\\)"),
          "the claim's index of ready heads: " + db + ": " + indexes);
      assertTrue(
          indexes.containsKey("ix_outbox_message_ready")
              && indexes.containsKey("ix_outbox_message_lease")
              && indexes.containsKey("ix_outbox_attempt_message"),
          db + ": " + indexes);
    }
  }

  @Test
  void theCheckerSeesAColumnThatDoesNotExist() {
    String sql =
        withoutLiterals(
            "UPDATE outbox_message m SET lease_untill = ? WHERE m.id = ? AND state = 'W'");
    Matcher m = IDENTIFIER.matcher(sql);
    List<String> found = new ArrayList<>();
    while (m.find()) {
      found.add(m.group(1));
    }
    assertEquals(List.of("outbox_message", "m", "lease_untill", "state"), found);
  }

  /**
   * Configurable names ({@code outbox.schema}, {@code outbox.table}): every statement of every
   * dialect renders (none names an {@code outbox_*} object {@link OutboxTables} does not know), no
   * default name survives, and the defaults render every statement unchanged.
   */
  @Test
  void everyStatementRendersForConfiguredNamesAndIsUnchangedByTheDefaults() throws Exception {
    OutboxTables custom = OutboxTables.of("names_it", "orders");
    for (String db : MigrationScriptsTest.DATABASES) {
      Map<String, String> sql = allSql(dialect(db));
      for (var e : sql.entrySet()) {
        assertEquals(
            e.getValue(), OutboxTables.DEFAULT.render(e.getValue()), db + " " + e.getKey());
        String rendered = custom.render(e.getValue());
        assertFalse(
            rendered.matches("(?s).*\\boutbox_\\w.*"), db + " " + e.getKey() + ": " + rendered);
        if (e.getValue().contains("outbox_message")) {
          assertTrue(
              rendered.contains("names_it.orders_message"),
              db + " " + e.getKey() + ": " + rendered);
        }
      }
      // The sets made for the names hold exactly the default statements rendered for them.
      Map<String, String> forNames = statements(dialect(db).jobs(custom));
      forNames.putAll(statements(dialect(db).admin(custom)));
      forNames.putAll(statements(dialect(db).reconciliation(custom)));
      Map<String, String> defaults = outboxStatements(dialect(db));
      defaults.putAll(statements(dialect(db).reconciliation(OutboxTables.DEFAULT)));
      assertEquals(defaults.keySet(), forNames.keySet(), db);
      defaults.forEach(
          (name, statement) ->
              assertEquals(custom.render(statement), forNames.get(name), db + " " + name));
    }
  }

  // ---- helpers -------------------------------------------------------------------------------

  private static Dialect dialect(String db) {
    Dialect d = DialectDetector.forProductName(db);
    assertEquals(db, d.name());
    return d;
  }

  /** The job and operator statements of a dialect for the default names: what the stores run. */
  private static Map<String, String> outboxStatements(Dialect dialect) throws Exception {
    Map<String, String> sql = statements(dialect.jobs(OutboxTables.DEFAULT));
    sql.putAll(statements(dialect.admin(OutboxTables.DEFAULT)));
    return sql;
  }

  /**
   * Every public no-argument {@code *Sql()} statement of a statement set, by method name; the
   * claim's lock (only where the claim locks first) is among {@link #allSql}'s claim statements.
   */
  private static Map<String, String> statements(Object set) throws Exception {
    Map<String, String> sql = new LinkedHashMap<>();
    for (Method m : set.getClass().getMethods()) {
      if (m.getName().endsWith("Sql")
          && m.getParameterCount() == 0
          && m.getReturnType() == String.class
          && !m.getName().equals("lockReadySql")) {
        sql.put(m.getName(), (String) m.invoke(set));
      }
    }
    return sql;
  }

  /**
   * The statements plus the claim's (in its dialect's shape), the batches' for 3 pairs, the clock's
   * fragments and the dialect's own SQL constants, the operator statements built with every filter
   * set, and the reconciliation's.
   */
  private static Map<String, String> allSql(Dialect dialect) throws Exception {
    Map<String, String> sql = outboxStatements(dialect);
    JobStatements jobs = dialect.jobs(OutboxTables.DEFAULT);
    UUID token = UUID.randomUUID();
    List<Long> ids = List.of(1L, 2L, 3L);
    List<UUID> tokens = List.of(token, token, token);
    if (jobs.claimLocksFirst()) {
      sql.put("LOCK_READY_SQL", jobs.lockReadySql());
      sql.put("CLAIM_LOCKED_SQL", jobs.claimLocked(token, 1000, ids).sql());
    } else {
      sql.put("CLAIM_SQL", jobs.claim(token, 1000, 10).sql());
    }
    sql.put("readClaimedSql", jobs.readClaimed(token, ids).sql());
    sql.put("claimKeyRunsSql", jobs.claimKeyRuns(token, 1000, ids).sql());
    sql.put("recordedAttemptsSql", jobs.recordedAttempts("DELIVERED", ids).sql());
    if (jobs.updateReturnsRows()) {
      sql.put("renewLeasesSql", jobs.renewLeases(ids, tokens, 1000).sql());
    } else {
      sql.put("renewLockedSql", jobs.renewLocked(ids, 1000).sql());
    }
    sql.putAll(batchedCompletionSql(dialect, 3));
    for (Field f : dialect.getClass().getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
        f.setAccessible(true);
        sql.put(f.getName(), (String) f.get(null));
      }
    }
    sql.put("now", dialect.clock().now());
    sql.put("nowPlusMillisParam", dialect.clock().nowPlusMillisParam());
    sql.put("statementNow", dialect.clock().statementNow());
    sql.put("statementNowPlusMillisParam", dialect.clock().statementNowPlusMillisParam());
    builtSql(dialect).forEach((name, bound) -> sql.put(name, bound.sql()));
    statements(dialect.reconciliation(OutboxTables.DEFAULT))
        .forEach((name, statement) -> sql.put("reconciliation." + name, statement));
    return sql;
  }

  /**
   * The statements of the batched completion for {@code pairs} (id, token) pairs: the dialect's one
   * statement, or the lock-then-update pair where updates return no rows.
   */
  private static Map<String, String> batchedCompletionSql(Dialect dialect, int pairs) {
    JobStatements jobs = dialect.jobs(OutboxTables.DEFAULT);
    List<Long> ids = new ArrayList<>();
    List<UUID> tokens = new ArrayList<>();
    for (int i = 0; i < pairs; i++) {
      ids.add(i + 1L);
      tokens.add(UUID.randomUUID());
    }
    Map<String, String> sql = new LinkedHashMap<>();
    if (jobs.updateReturnsRows()) {
      sql.put("markDeliveredAllSql", jobs.markDeliveredAll(ids, tokens).sql());
    } else {
      sql.put("lockTokensHeldSql", jobs.lockTokensHeld(ids, tokens).sql());
      sql.put("markLockedDeliveredSql", jobs.markLockedDelivered(ids).sql());
    }
    return sql;
  }

  /** What each dialect's batched completion binds for 3 pairs, as its markDeliveredAll binds it. */
  @Test
  void theBatchedCompletionBindsWhatItsDialectPasses() {
    Map<String, Map<String, Integer>> expected =
        Map.of(
            "postgresql", Map.of("markDeliveredAllSql", 2), // two arrays
            "h2", Map.of("markDeliveredAllSql", 9), // 3 ids, then 3 (id, token)
            "sqlserver", Map.of("markDeliveredAllSql", 6), // 3 (id, token) rows
            "mariadb", Map.of("lockTokensHeldSql", 9, "markLockedDeliveredSql", 3));
    for (String db : MigrationScriptsTest.DATABASES) {
      Map<String, Integer> counts = new LinkedHashMap<>();
      batchedCompletionSql(dialect(db), 3)
          .forEach((name, sql) -> counts.put(name, parameters(sql)));
      assertEquals(expected.get(db), counts, db);
    }
    assertTrue(
        dialect("sqlserver").maxCompletionPairs() * 2 <= 2100,
        "SQL Server takes at most 2,100 parameters per statement");
  }

  /**
   * The statements built per call: the admin's per filter, with every filter set (the longest SQL),
   * and the key run.
   */
  private static Map<String, BoundSql> builtSql(Dialect dialect) {
    Instant from = Instant.parse("2024-01-01T00:00:00Z");
    Instant to = from.plusSeconds(3600);
    AdminStatements admin = dialect.admin(OutboxTables.DEFAULT);
    Map<String, BoundSql> sql = new LinkedHashMap<>();
    sql.put(
        "listJobs",
        admin.listJobs(
            new Listing('D', "http:billing", "key-1", "HttpStatus", "order-", from, to, 10, 50)));
    sql.put(
        "listJobs(unfiltered)",
        admin.listJobs(new Listing(null, null, null, null, null, null, null, 0, 50)));
    sql.put("countDead", admin.countDead("http:billing", "HttpStatus", from, to, "key-1"));
    sql.put("replayDead", admin.replayDead("http:billing", "HttpStatus", from, to, "key-1", 100));
    sql.put("replayDead(unfiltered)", admin.replayDead(null, null, null, null, null, 100));
    long week = 7L * 24 * 3600 * 1000;
    sql.put("pickFinished", dialect.jobs(OutboxTables.DEFAULT).pickFinished(week, 500));
    sql.put(
        "deleteFinished", dialect.jobs(OutboxTables.DEFAULT).deleteFinished(List.of(1L, 2L), week));
    sql.put(
        "deleteAttemptsOfDeleted",
        dialect.jobs(OutboxTables.DEFAULT).deleteAttemptsOfDeleted(List.of(1L, 2L)));
    // The key run's parameters differ per database (one walk on PostgreSQL, a seek per state else).
    sql.put("keyRun", dialect.jobs(OutboxTables.DEFAULT).keyRun("key-1", 1, 16));
    return sql;
  }

  private static String withoutLiterals(String sql) {
    return sql.replaceAll("'[^']*'", "''").replaceAll("@+\\w+", "@VARIABLE");
  }

  private static int parameters(String sql) {
    return (int) withoutLiterals(sql).chars().filter(c -> c == '?').count();
  }

  /** Index name to {@code table(columns)} of {@code db}'s migrations. */
  private static Map<String, String> indexes(String db) throws IOException {
    Map<String, String> indexes = new LinkedHashMap<>();
    Matcher m = CREATE_INDEX.matcher(MigrationScriptsTest.script(db).replaceAll("--[^\\n]*", ""));
    while (m.find()) {
      if (m.group(4) != null) {
        assertNotNull(
            indexes.remove(m.group(4).toLowerCase(Locale.ROOT)), db + " drops " + m.group());
        continue;
      }
      indexes.put(
          m.group(1).toLowerCase(Locale.ROOT),
          m.group(2).toLowerCase(Locale.ROOT)
              + "("
              + m.group(3).strip().replaceAll("\\s*,\\s*", ", ").toLowerCase(Locale.ROOT)
              + ")");
    }
    if (indexes.isEmpty()) {
      fail("no CREATE INDEX in " + db);
    }
    return indexes;
  }
}
