package dev.outboxrelay.outbox.testing;

import dev.outboxrelay.outbox.schema.OutboxSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.flywaydb.core.api.exception.FlywayValidateException;
import org.h2.jdbcx.JdbcDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Real databases for tests, shared through this module's test-jar.
 *
 * <p>PostgreSQL comes from the system properties {@code outbox.test.pg.url} and {@code
 * outbox.test.pg.user} (failsafe passes them; defaults: local {@code test} database, user {@code
 * postgres}). Each suite works in its own schema so modules never see each other's rows: this
 * module uses {@value #OUTBOX_LIB_SCHEMA}; other modules should pass their own name to {@link
 * #postgres(String)}. Tables are kept after the run; call {@link #reset} between tests.
 */
public final class TestDatabases {
  public static final String OUTBOX_LIB_SCHEMA = "outbox_lib_it";
  public static final String DEFAULT_PG_URL = "jdbc:postgresql://127.0.0.1:5432/test";
  public static final String DEFAULT_PG_USER = "postgres";

  /** Destinations the test configurations accept. */
  public static final String HTTP_BILLING = "http:billing";
  public static final String KAFKA_ORDERS = "kafka:orders";

  private static final Map<String, DataSource> POSTGRES = new ConcurrentHashMap<>();

  private TestDatabases() {}

  /** A fresh, migrated in-memory H2 database (kept open until the JVM exits). */
  public static DataSource h2() {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:outbox-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    ds.setUser("sa");
    OutboxSchema.migrate(ds);
    return ds;
  }

  /** The migrated PostgreSQL schema {@value #OUTBOX_LIB_SCHEMA}. */
  public static DataSource postgres() {
    return postgres(OUTBOX_LIB_SCHEMA);
  }

  /**
   * A PostgreSQL data source whose connections use {@code schema} (created and migrated once per
   * JVM). When the schema holds outbox tables from older scripts that no longer validate, it is
   * dropped and rebuilt.
   */
  public static DataSource postgres(String schema) {
    if (!schema.matches("[a-z_][a-z0-9_]*")) {
      throw new IllegalArgumentException("schema must be a plain lower-case identifier: " + schema);
    }
    return POSTGRES.computeIfAbsent(schema, TestDatabases::createPostgres);
  }

  /**
   * Another data source on the migrated {@code schema} whose sessions start with {@code options}
   * (libpq syntax, e.g. {@code "-c enable_hashjoin=off"}): for forcing planner choices.
   */
  public static DataSource postgres(String schema, String options) {
    postgres(schema);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(System.getProperty("outbox.test.pg.url", DEFAULT_PG_URL));
    ds.setUser(System.getProperty("outbox.test.pg.user", DEFAULT_PG_USER));
    ds.setCurrentSchema(schema);
    ds.setOptions(options);
    return ds;
  }

  private static DataSource createPostgres(String schema) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(System.getProperty("outbox.test.pg.url", DEFAULT_PG_URL));
    ds.setUser(System.getProperty("outbox.test.pg.user", DEFAULT_PG_USER));
    execute(ds, "CREATE SCHEMA IF NOT EXISTS " + schema);
    ds.setCurrentSchema(schema);
    try {
      OutboxSchema.migrate(ds);
    } catch (FlywayValidateException e) {
      // Scripts changed since this schema was built (checksum mismatch): start over.
      ds.setCurrentSchema("public");
      execute(ds, "DROP SCHEMA " + schema + " CASCADE");
      execute(ds, "CREATE SCHEMA " + schema);
      ds.setCurrentSchema(schema);
      OutboxSchema.migrate(ds);
    }
    return ds;
  }

  /** Deletes every job and attempt. */
  public static void reset(DataSource ds) {
    execute(ds, "DELETE FROM outbox_attempt");
    execute(ds, "DELETE FROM outbox_message");
  }

  /**
   * Inserts {@code n} ready jobs, due one second ago, to {@link #HTTP_BILLING}; returns their ids
   * in ascending order. Operation ids are {@code <prefix>-<i>} with a random prefix.
   */
  public static List<Long> insertReady(DataSource ds, int n) {
    String prefix = "ready-" + UUID.randomUUID();
    String sql = "INSERT INTO outbox_message (operation_id, destination, payload, content_type,"
        + " deliver_after) VALUES (?, ?, ?, 'application/json',"
        + " CURRENT_TIMESTAMP - INTERVAL '1' SECOND)";
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < n; i++) {
          ps.setString(1, prefix + "-" + i);
          ps.setString(2, HTTP_BILLING);
          ps.setString(3, "{\"n\":" + i + "}");
          ps.addBatch();
          if (i % 1000 == 999) {
            ps.executeBatch();
          }
        }
        ps.executeBatch();
      }
      c.commit();
    } catch (SQLException e) {
      throw new IllegalStateException("insert of " + n + " ready jobs failed", e);
    }
    return queryLongs(ds, "SELECT id FROM outbox_message WHERE operation_id LIKE ? ORDER BY id",
        prefix + "-%");
  }

  /** Moves a job's {@code deliver_after} to {@code seconds} before the database's now. */
  public static void makeDue(DataSource ds, long id, int secondsAgo) {
    update(ds, "UPDATE outbox_message SET deliver_after = CURRENT_TIMESTAMP - INTERVAL '"
        + secondsAgo + "' SECOND WHERE id = ?", id);
  }

  /** Runs an update in auto-commit mode; returns the row count. */
  public static int update(DataSource ds, String sql, Object... params) {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, params);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("update failed: " + sql, e);
    }
  }

  /** The first column of every row, as longs. */
  public static List<Long> queryLongs(DataSource ds, String sql, Object... params) {
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ps, params);
      List<Long> values = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          values.add(rs.getLong(1));
        }
      }
      return values;
    } catch (SQLException e) {
      throw new IllegalStateException("query failed: " + sql, e);
    }
  }

  /** A single long, e.g. a {@code COUNT(*)}. */
  public static long queryLong(DataSource ds, String sql, Object... params) {
    List<Long> values = queryLongs(ds, sql, params);
    if (values.size() != 1) {
      throw new IllegalStateException("expected one row, got " + values.size() + ": " + sql);
    }
    return values.get(0);
  }

  /** Number of jobs in {@code outbox_message}. */
  public static long countMessages(DataSource ds) {
    return queryLong(ds, "SELECT COUNT(*) FROM outbox_message");
  }

  /** Runs one statement in auto-commit mode (DDL, deletes). */
  public static void execute(DataSource ds, String sql) {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("statement failed: " + sql, e);
    }
  }

  private static void bind(PreparedStatement ps, Object... params) throws SQLException {
    for (int i = 0; i < params.length; i++) {
      ps.setObject(i + 1, params[i]);
    }
  }
}
