package dev.outboxrelay.outbox.store.dialect;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Renders a statement set's SQL, written with the default names, for an outbox's configured names
 * ({@link OutboxTables#render}). Fixed statements are rendered once, when their set is made; a
 * statement whose text depends on its arguments (a batch's placeholders, the filters set) once per
 * distinct text, then served from a cache. Identity for the default names.
 */
final class Renderer {
  /** Bounds the cache: the dialects' variable statements are a small set of shapes. */
  private static final int MAX_CACHED = 2048;

  private final OutboxTables tables;
  private final Map<String, String> rendered = new ConcurrentHashMap<>();

  Renderer(OutboxTables tables) {
    this.tables = Objects.requireNonNull(tables, "tables");
  }

  OutboxTables tables() {
    return tables;
  }

  String render(String sql) {
    if (tables.isDefault()) {
      return sql;
    }
    String r = rendered.get(sql);
    if (r == null) {
      r = tables.render(sql);
      if (rendered.size() < MAX_CACHED) {
        rendered.put(sql, r);
      }
    }
    return r;
  }

  BoundSql render(BoundSql sql) {
    return new BoundSql(render(sql.sql()), sql.params());
  }
}
