package dev.outboxrelay.outbox.testing;

import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.flywaydb.core.api.exception.FlywayValidateException;
import org.h2.jdbcx.JdbcDataSource;
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Real databases for tests, shared through this module's test-jar.
 *
 * <p>PostgreSQL comes from the system properties {@code outbox.test.pg.url} and {@code
 * outbox.test.pg.user} (failsafe passes them; defaults: local {@code test} database, user {@code
 * postgres}). Each suite works in its own schema so modules never see each other's rows: this
 * module uses {@value #OUTBOX_LIB_SCHEMA}; other modules should pass their own name to {@link
 * #postgres(String)}. Tables are kept after the run; call {@link #reset} between tests.
 *
 * <p>MariaDB comes from {@code outbox.test.mariadb.url}, {@code .user} and {@code .password}
 * (defaults: local server, {@code root} without password); each suite gets a database of its own
 * ({@link #mariadb(String)}, created as needed, so the user must be allowed to create databases).
 * Test sessions run in time zone {@value #MARIADB_TEST_TIME_ZONE}: a statement that read the
 * session clock ({@code NOW()}) instead of {@code UTC_TIMESTAMP()} would be five hours off.
 *
 * <p>SQL Server comes from the environment variable {@value #MSSQL_URL_ENV} (a JDBC URL with
 * credentials), else from a Testcontainers container where a Docker engine answers; elsewhere
 * {@link #sqlServerUnavailable()} says why, and the SQL Server tests skip themselves with it. Each
 * suite gets a database of its own ({@link #sqlServer(String)}).
 */
public final class TestDatabases {
  public static final String OUTBOX_LIB_SCHEMA = "outbox_lib_it";
  public static final String DEFAULT_PG_URL = "jdbc:postgresql://127.0.0.1:5432/test";
  public static final String DEFAULT_PG_USER = "postgres";

  /** Destinations the test configurations accept. */
  public static final String HTTP_BILLING = "http:billing";

  public static final String KAFKA_ORDERS = "kafka:orders";

  public static final String DEFAULT_MARIADB_URL = "jdbc:mariadb://127.0.0.1:3306/test";
  public static final String DEFAULT_MARIADB_USER = "root";

  /** Not UTC on purpose (see the class comment). */
  public static final String MARIADB_TEST_TIME_ZONE = "-05:00";

  /** JDBC URL of a SQL Server to test against, with credentials. */
  public static final String MSSQL_URL_ENV = "OUTBOX_MSSQL_URL";

  /** Image of the Testcontainers fallback. */
  public static final String MSSQL_IMAGE = "mcr.microsoft.com/mssql/server:2022-latest";

  private static final Map<String, DataSource> POSTGRES = new ConcurrentHashMap<>();
  private static final Map<String, DataSource> MARIADB = new ConcurrentHashMap<>();
  private static final Map<String, DataSource> SQLSERVER = new ConcurrentHashMap<>();
  private static final Map<DataSource, DataSource> POOLED = new ConcurrentHashMap<>();
  private static final Map<DataSource, String> PRODUCT = new ConcurrentHashMap<>();
  private static final Map<DataSource, Dialect> DIALECT = new ConcurrentHashMap<>();

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
   * {@code postgres} (a data source of {@link #postgres(String)}) with its connections kept open
   * between uses, one pool per data source ({@link PooledPostgres}: for the suites, whose stores
   * open a connection per call); each connection given back is cleared of its session state.
   */
  public static DataSource pooled(DataSource postgres) {
    return POOLED.computeIfAbsent(postgres, PooledPostgres::new);
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

  // ---- MariaDB -------------------------------------------------------------------------------

  /**
   * A MariaDB data source on database {@code database} (created and migrated once per JVM; rebuilt
   * when it holds outbox tables from older scripts that no longer validate).
   */
  public static DataSource mariadb(String database) {
    requireIdentifier(database);
    return MARIADB.computeIfAbsent(database, TestDatabases::createMariaDb);
  }

  /** The JDBC URL of {@link #mariadb(String)}'s database, with the test session time zone. */
  public static String mariadbUrl(String database) {
    requireIdentifier(database);
    String url = System.getProperty("outbox.test.mariadb.url", DEFAULT_MARIADB_URL);
    Matcher m = Pattern.compile("(jdbc:mariadb://[^/?]+)(/[^?]*)?(\\?.*)?").matcher(url);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "outbox.test.mariadb.url is not a jdbc:mariadb:// URL: " + url);
    }
    String query = m.group(3) == null ? "" : "&" + m.group(3).substring(1);
    return m.group(1)
        + "/"
        + database
        + "?sessionVariables=time_zone='"
        + MARIADB_TEST_TIME_ZONE
        + "'"
        + query;
  }

  /**
   * Another data source on the migrated {@code database} whose sessions' clock stands still at
   * {@code at} (MariaDB's {@code timestamp} session variable: every statement sees the same {@code
   * UTC_TIMESTAMP(3)}), for what happens within one millisecond.
   */
  public static DataSource mariadbFrozenClock(String database, java.time.Instant at) {
    mariadb(database);
    String url =
        mariadbUrl(database)
            .replace(
                "sessionVariables=",
                "sessionVariables=timestamp="
                    + at.getEpochSecond()
                    + "."
                    + String.format("%03d", at.getNano() / 1_000_000)
                    + ",");
    try {
      return mariaDbDataSource(url);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot open MariaDB database " + database, e);
    }
  }

  public static String mariadbUser() {
    return System.getProperty("outbox.test.mariadb.user", DEFAULT_MARIADB_USER);
  }

  public static String mariadbPassword() {
    return System.getProperty("outbox.test.mariadb.password", "");
  }

  private static DataSource createMariaDb(String database) {
    try {
      MariaDbDataSource admin =
          mariaDbDataSource(System.getProperty("outbox.test.mariadb.url", DEFAULT_MARIADB_URL));
      execute(
          admin,
          "CREATE DATABASE IF NOT EXISTS "
              + database
              + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
      MariaDbDataSource ds = mariaDbDataSource(mariadbUrl(database));
      try {
        OutboxSchema.migrate(ds);
      } catch (FlywayValidateException e) {
        // Scripts changed since this database was built (checksum mismatch): start over.
        execute(admin, "DROP DATABASE " + database);
        execute(
            admin, "CREATE DATABASE " + database + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
        OutboxSchema.migrate(ds);
      }
      return ds;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot set up MariaDB database " + database, e);
    }
  }

  private static MariaDbDataSource mariaDbDataSource(String url) throws SQLException {
    MariaDbDataSource ds = new MariaDbDataSource(url);
    ds.setUser(mariadbUser());
    ds.setPassword(mariadbPassword());
    return ds;
  }

  // ---- SQL Server ----------------------------------------------------------------------------

  /**
   * Why SQL Server tests cannot run here, or empty when they can: {@value #MSSQL_URL_ENV} is set,
   * or a Docker engine answers for Testcontainers.
   */
  public static Optional<String> sqlServerUnavailable() {
    return SqlServerSource.UNAVAILABLE;
  }

  /** A SQL Server data source on database {@code database} (created and migrated once per JVM). */
  public static DataSource sqlServer(String database) {
    requireIdentifier(database);
    return SQLSERVER.computeIfAbsent(database, TestDatabases::createSqlServer);
  }

  /** The JDBC URL (with credentials) of {@link #sqlServer(String)}'s database. */
  public static String sqlServerUrl(String database) {
    requireIdentifier(database);
    // A URL may name a database already (databaseName= or database=): ours replaces it.
    String base = SqlServerSource.baseUrl().replaceAll("(?i);(databaseName|database)=[^;]*", "");
    return base + (base.endsWith(";") ? "" : ";") + "databaseName=" + database;
  }

  private static DataSource createSqlServer(String database) {
    DataSource admin = sqlServerDataSource(SqlServerSource.baseUrl());
    execute(admin, "IF DB_ID(N'" + database + "') IS NULL CREATE DATABASE " + database);
    DataSource ds = sqlServerDataSource(sqlServerUrl(database));
    try {
      OutboxSchema.migrate(ds);
    } catch (FlywayValidateException e) {
      execute(admin, "ALTER DATABASE " + database + " SET SINGLE_USER WITH ROLLBACK IMMEDIATE");
      execute(admin, "DROP DATABASE " + database);
      execute(admin, "CREATE DATABASE " + database);
      OutboxSchema.migrate(ds);
    }
    return ds;
  }

  private static DataSource sqlServerDataSource(String url) {
    com.microsoft.sqlserver.jdbc.SQLServerDataSource ds =
        new com.microsoft.sqlserver.jdbc.SQLServerDataSource();
    ds.setURL(url);
    return ds;
  }

  /** Where the SQL Server comes from, decided once per JVM. */
  private static final class SqlServerSource {
    static final String ENV_URL = System.getenv(MSSQL_URL_ENV);
    static final Optional<String> UNAVAILABLE = decide();
    private static volatile String containerUrl;

    private static Optional<String> decide() {
      if (ENV_URL != null && !ENV_URL.isBlank()) {
        return Optional.empty();
      }
      if (dockerAnswers()) {
        return Optional.empty();
      }
      return Optional.of(
          "no SQL Server here: "
              + MSSQL_URL_ENV
              + " is not set and no Docker engine"
              + " answers for Testcontainers (set "
              + MSSQL_URL_ENV
              + "=jdbc:sqlserver://host:1433;user=...;password=...;encrypt=false to run it)");
    }

    private static boolean dockerAnswers() {
      try {
        return org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
      } catch (Throwable e) {
        return false; // no Testcontainers, or it failed to probe: treated as no Docker
      }
    }

    static synchronized String baseUrl() {
      if (UNAVAILABLE.isPresent()) {
        throw new IllegalStateException(UNAVAILABLE.get());
      }
      if (ENV_URL != null && !ENV_URL.isBlank()) {
        return ENV_URL;
      }
      if (containerUrl == null) {
        org.testcontainers.mssqlserver.MSSQLServerContainer c =
            new org.testcontainers.mssqlserver.MSSQLServerContainer(MSSQL_IMAGE).acceptLicense();
        c.start(); // stopped by Testcontainers' reaper when the JVM exits
        containerUrl = c.getJdbcUrl() + ";user=" + c.getUsername() + ";password=" + c.getPassword();
      }
      return containerUrl;
    }
  }

  // ---- SQL that differs between the databases (for tests' own statements) -------------------

  /** SQL: the clock the outbox columns use, {@code seconds} ago (negative: in the future). */
  public static String secondsAgo(DataSource ds, long seconds) {
    return switch (product(ds)) {
      case "mariadb" -> "TIMESTAMPADD(SECOND, " + (-seconds) + ", UTC_TIMESTAMP(3))";
      case "microsoft sql server" -> "DATEADD(SECOND, " + (-seconds) + ", SYSUTCDATETIME())";
      default -> "CURRENT_TIMESTAMP - INTERVAL '" + seconds + "' SECOND";
    };
  }

  /** SQL: the timestamp expression {@code expression} moved {@code seconds} earlier. */
  public static String minusSeconds(DataSource ds, String expression, long seconds) {
    return switch (product(ds)) {
      case "mariadb" -> "TIMESTAMPADD(SECOND, " + (-seconds) + ", " + expression + ")";
      case "microsoft sql server" -> "DATEADD(SECOND, " + (-seconds) + ", " + expression + ")";
      default -> expression + " - INTERVAL '" + seconds + "' SECOND";
    };
  }

  /** The database product name of {@code ds}, lower case (cached per data source). */
  public static String product(DataSource ds) {
    return PRODUCT.computeIfAbsent(
        ds,
        d -> {
          try (Connection c = d.getConnection()) {
            return c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
          } catch (SQLException e) {
            throw new IllegalStateException("cannot read the database product", e);
          }
        });
  }

  private static void requireIdentifier(String name) {
    if (!name.matches("[a-z_][a-z0-9_]*")) {
      throw new IllegalArgumentException("database must be a plain lower-case identifier: " + name);
    }
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
    String sql =
        "INSERT INTO outbox_message (operation_id, destination, payload, content_type,"
            + " deliver_after) VALUES (?, ?, ?, 'application/json', "
            + secondsAgo(ds, 1)
            + ")";
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
    return queryLongs(
        ds, "SELECT id FROM outbox_message WHERE operation_id LIKE ? ORDER BY id", prefix + "-%");
  }

  /**
   * A backlog on busy keys: {@code perKey} ready jobs on each of {@code keys} keys ({@code
   * key-<k>}), enqueued round-robin over the keys (as interleaved producers would), each after its
   * key's first marked as waiting ({@code key_wait}) as an enqueue marks it; then the statistics
   * are refreshed.
   */
  public static void insertKeyedBacklog(DataSource ds, int keys, int perKey) {
    String sql =
        "INSERT INTO outbox_message (operation_id, destination, ordering_key, payload, content_type,"
            + " deliver_after, key_wait) VALUES (?, ?, ?, '{}', 'application/json', "
            + secondsAgo(ds, 1)
            + ", ?)";
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int j = 0; j < perKey; j++) {
          for (int k = 0; k < keys; k++) {
            ps.setString(1, "backlog-" + k + "-" + j);
            ps.setString(2, HTTP_BILLING);
            ps.setString(3, "key-" + k);
            ps.setBoolean(4, j > 0);
            ps.addBatch();
          }
          ps.executeBatch();
        }
      }
      c.commit();
    } catch (SQLException e) {
      throw new IllegalStateException("insert of a keyed backlog failed", e);
    }
    execute(
        ds,
        "mariadb".equals(product(ds)) ? "ANALYZE TABLE outbox_message" : "ANALYZE outbox_message");
  }

  /** Moves a job's {@code deliver_after} to {@code seconds} before the database's now. */
  public static void makeDue(DataSource ds, long id, int secondsAgo) {
    update(
        ds,
        "UPDATE outbox_message SET deliver_after = " + secondsAgo(ds, secondsAgo) + " WHERE id = ?",
        id);
  }

  /** Runs an update in auto-commit mode; returns the row count. */
  public static int update(DataSource ds, String sql, Object... params) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ds, ps, params);
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("update failed: " + sql, e);
    }
  }

  /** The first column of every row, as longs. */
  public static List<Long> queryLongs(DataSource ds, String sql, Object... params) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      bind(ds, ps, params);
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
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("statement failed: " + sql, e);
    }
  }

  /** Times and claim tokens go through the dialect's hooks (MariaDB DATETIME holds UTC, ...). */
  private static void bind(DataSource ds, PreparedStatement ps, Object... params)
      throws SQLException {
    Dialect dialect = null;
    for (int i = 0; i < params.length; i++) {
      if (params[i] instanceof Instant || params[i] instanceof UUID) {
        dialect = dialect != null ? dialect : dialect(ds);
        if (params[i] instanceof Instant t) {
          dialect.binding().bindInstant(ps, i + 1, t);
        } else {
          dialect.binding().bindUuid(ps, i + 1, (UUID) params[i]);
        }
      } else {
        ps.setObject(i + 1, params[i]);
      }
    }
  }

  /** The outbox dialect of {@code ds} (cached per data source). */
  public static Dialect dialect(DataSource ds) {
    return DIALECT.computeIfAbsent(
        ds,
        d -> {
          try (Connection c = d.getConnection()) {
            return DialectDetector.detect(c.getMetaData());
          } catch (SQLException e) {
            throw new IllegalStateException("cannot detect the outbox dialect", e);
          }
        });
  }
}
