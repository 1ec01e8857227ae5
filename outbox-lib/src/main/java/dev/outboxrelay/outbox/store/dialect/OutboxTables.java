package dev.outboxrelay.outbox.store.dialect;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where an outbox's tables live: an optional schema ({@code outbox.schema}) and the base name of
 * its tables ({@code outbox.table}, default {@value #DEFAULT_TABLE}), so that one database can hold
 * several independent outboxes. The tables are {@code <table>_message}, {@code <table>_attempt},
 * {@code <table>_payload}, {@code <table>_confirmation}, {@code <table>_lock}, {@code
 * <table>_reconciliation_run} and {@code <table>_reconciliation_item}, qualified with the schema
 * when one is set; Flyway's history is {@code <table>_schema_history} in that schema.
 *
 * <p>Both names are validated when the value is made and are the only configured text that ever
 * reaches SQL: a plain lower-case identifier ({@code [a-z_][a-z0-9_]*}), the table at most {@value
 * #MAX_TABLE_LENGTH} characters (so that every derived index and constraint name stays within
 * PostgreSQL's 63), the schema at most {@value #MAX_SCHEMA_LENGTH}, and no SQL keyword. Anything
 * else (quotes, semicolons, spaces, comment markers, upper case, empty) throws an {@link
 * IllegalArgumentException} naming the key, the rejected value and the rule.
 *
 * <p>SQL is written once, with the default names; {@link #render} turns it into this outbox's names
 * (the dialects' statement sets when a store is made, migrations through {@code
 * schema.OutboxSchema}). With the defaults rendering is the identity, so existing databases see the
 * same statements and the same migration checksums.
 */
public final class OutboxTables {
  public static final String DEFAULT_TABLE = "outbox";
  public static final String TABLE_KEY = "outbox.table";
  public static final String SCHEMA_KEY = "outbox.schema";
  public static final int MAX_TABLE_LENGTH = 30;
  public static final int MAX_SCHEMA_LENGTH = 63;

  /** Table {@value #DEFAULT_TABLE}, no schema: the connection's default schema. */
  public static final OutboxTables DEFAULT = new OutboxTables(null, DEFAULT_TABLE);

  /** Table suffixes: rendered schema-qualified. */
  private static final Set<String> TABLES =
      Set.of(
          "message",
          "attempt",
          "payload",
          "confirmation",
          "lock",
          "reconciliation_run",
          "reconciliation_item",
          "schema_history");

  /** Function suffixes (PostgreSQL's notify trigger function): rendered schema-qualified. */
  private static final Set<String> FUNCTIONS = Set.of("notify_ready");

  /** The PostgreSQL notification channel: a database-wide name, never qualified. */
  private static final String CHANNEL = "ready";

  /**
   * Prefixes of index, constraint, default and trigger names ({@code ix_outbox_message_head}):
   * renamed with the table but never qualified (CREATE INDEX and constraints take bare names).
   */
  private static final Pattern OBJECT_NAME =
      Pattern.compile("(ix|uq|fk|ck|pk|df|tr)_outbox_([a-z0-9_]+)");

  /** Every word that mentions {@code outbox_}, in any case: each must be a known name. */
  private static final Pattern TOKEN = Pattern.compile("(?i)\\b\\w*outbox_\\w*\\b");

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");

  /**
   * Words PostgreSQL, MariaDB or SQL Server reserve that could be a schema (a table base name is
   * always suffixed, so it cannot collide): as a schema they would break every statement.
   */
  private static final Set<String> RESERVED =
      Set.of(
          "all",
          "and",
          "any",
          "as",
          "asc",
          "between",
          "by",
          "case",
          "check",
          "column",
          "constraint",
          "create",
          "cross",
          "current_user",
          "default",
          "delete",
          "desc",
          "distinct",
          "drop",
          "else",
          "end",
          "exists",
          "for",
          "foreign",
          "from",
          "grant",
          "group",
          "having",
          "in",
          "index",
          "inner",
          "insert",
          "into",
          "is",
          "join",
          "key",
          "left",
          "like",
          "limit",
          "not",
          "null",
          "offset",
          "on",
          "or",
          "order",
          "outer",
          "primary",
          "references",
          "right",
          "select",
          "session_user",
          "set",
          "table",
          "then",
          "to",
          "union",
          "unique",
          "update",
          "user",
          "using",
          "values",
          "when",
          "where",
          "with");

  private final String schema;
  private final String table;

  private OutboxTables(String schema, String table) {
    this.schema = schema;
    this.table = table;
  }

  /**
   * Validated names.
   *
   * @param schema the schema holding the tables; empty: the connection's default schema
   * @param table the base name of the tables ({@value #DEFAULT_TABLE} for the defaults)
   * @throws IllegalArgumentException a name is not a plain identifier; the message names the key
   */
  public static OutboxTables of(Optional<String> schema, String table) {
    Objects.requireNonNull(schema, SCHEMA_KEY);
    String t = requireIdentifier(TABLE_KEY, table, MAX_TABLE_LENGTH);
    String s = schema.map(v -> requireIdentifier(SCHEMA_KEY, v, MAX_SCHEMA_LENGTH)).orElse(null);
    if (s != null && RESERVED.contains(s)) {
      throw new IllegalArgumentException(
          SCHEMA_KEY
              + "='"
              + s
              + "' is rejected: it is a reserved SQL"
              + " word; choose another schema name");
    }
    return s == null && t.equals(DEFAULT_TABLE) ? DEFAULT : new OutboxTables(s, t);
  }

  /** Validated names; a null or absent schema means the connection's default schema. */
  public static OutboxTables of(String schema, String table) {
    return of(Optional.ofNullable(schema), table);
  }

  private static String requireIdentifier(String key, String value, int maxLength) {
    if (value == null) {
      throw new IllegalArgumentException(
          key + " must be set: a plain identifier" + rule(maxLength));
    }
    if (!IDENTIFIER.matcher(value).matches() || value.length() > maxLength) {
      throw new IllegalArgumentException(
          key
              + "='"
              + printable(value)
              + "' is rejected: it must be a"
              + " plain identifier"
              + rule(maxLength)
              + (value.isEmpty()
                  ? " (it is empty)"
                  : value.length() > maxLength ? " (it has " + value.length() + ")" : ""));
    }
    return value;
  }

  private static String rule(int maxLength) {
    return " ([a-z_][a-z0-9_]*: lower-case letters, digits and _, not starting with a digit; no"
        + " quotes, spaces, semicolons or comment markers) of at most "
        + maxLength
        + " characters";
  }

  /** The value as it can be logged: control and non-ASCII characters as {@code \\uXXXX}. */
  private static String printable(String value) {
    StringBuilder b = new StringBuilder();
    value
        .codePoints()
        .forEach(
            cp -> {
              if (cp >= 0x20 && cp < 0x7f) {
                b.appendCodePoint(cp);
              } else {
                b.append(String.format(Locale.ROOT, cp > 0xffff ? "\\U%08X" : "\\u%04X", cp));
              }
            });
    return b.toString();
  }

  public Optional<String> schema() {
    return Optional.ofNullable(schema);
  }

  public String table() {
    return table;
  }

  public boolean isDefault() {
    return schema == null && table.equals(DEFAULT_TABLE);
  }

  /** Flyway's history table of this outbox ({@code <table>_schema_history}, unqualified). */
  public String historyTable() {
    return table + "_schema_history";
  }

  /** The PostgreSQL notification channel of this outbox ({@code <table>_ready}). */
  public String readyChannel() {
    return table + "_" + CHANNEL;
  }

  /** {@code <schema>.<table>_<suffix>}, or without the schema when none is set. */
  private String qualified(String suffix) {
    return (schema == null ? "" : schema + ".") + table + "_" + suffix;
  }

  /**
   * {@code sql}, written with the default names, with this outbox's names: tables and functions
   * ({@code outbox_message}) qualified, index/constraint/trigger names ({@code ix_outbox_...})
   * renamed, the notification channel ({@code outbox_ready}) renamed. Whole words only.
   *
   * @throws IllegalStateException {@code sql} names an {@code outbox_*} object this class does not
   *     know (a new table or index must be added here, never escape renaming silently)
   */
  public String render(String sql) {
    Matcher m = TOKEN.matcher(sql);
    StringBuilder out = new StringBuilder(sql.length() + 32);
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(renderToken(m.group(), sql)));
    }
    return m.appendTail(out).toString();
  }

  private String renderToken(String token, String sql) {
    if (token.startsWith("outbox_")) {
      String suffix = token.substring("outbox_".length());
      if (TABLES.contains(suffix) || FUNCTIONS.contains(suffix)) {
        return qualified(suffix);
      }
      if (suffix.equals(CHANNEL)) {
        return readyChannel();
      }
    }
    Matcher object = OBJECT_NAME.matcher(token);
    if (object.matches() && startsWithTable(object.group(2))) {
      return object.group(1) + "_" + table + "_" + object.group(2);
    }
    throw new IllegalStateException(
        "unknown outbox name '"
            + token
            + "' (known: outbox_<"
            + TABLES
            + "|"
            + FUNCTIONS
            + "|"
            + CHANNEL
            + ">, <ix|uq|fk|ck|pk|df|tr>_outbox_<table>_...): add it to"
            + " OutboxTables so that it is renamed with outbox.table; in: "
            + abbreviated(sql));
  }

  private static boolean startsWithTable(String rest) {
    for (String t : TABLES) {
      if (rest.equals(t) || rest.startsWith(t + "_")) {
        return true;
      }
    }
    return false;
  }

  private static String abbreviated(String sql) {
    return sql.length() <= 200 ? sql : sql.substring(0, 200) + "...";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof OutboxTables other
        && Objects.equals(schema, other.schema)
        && table.equals(other.table);
  }

  @Override
  public int hashCode() {
    return Objects.hash(schema, table);
  }

  /** {@code schema.table}, or {@code table}. */
  @Override
  public String toString() {
    return (schema == null ? "" : schema + ".") + table;
  }
}
