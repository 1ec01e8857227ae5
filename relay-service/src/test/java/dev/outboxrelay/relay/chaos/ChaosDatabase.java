package dev.outboxrelay.relay.chaos;

import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * The outbox database an experiment runs on: the test side's data source and the relay's named
 * datasource (see {@code RelayService.OUTBOX_DATASOURCES}), both on a schema or database of the
 * experiment's own. PostgreSQL unless an experiment is parameterised over several.
 */
public enum ChaosDatabase {
  POSTGRESQL("postgresql", ""),
  MARIADB("mariadb", "-mariadb"),
  SQLSERVER("sqlserver", "-sqlserver");

  /** The relay's datasource name. */
  private final String datasource;

  /** Appended to the experiment's name, so each database reports its own CHAOS line. */
  private final String suffix;

  ChaosDatabase(String datasource, String suffix) {
    this.datasource = datasource;
    this.suffix = suffix;
  }

  public String datasource() {
    return datasource;
  }

  /** The experiment's name on this database: {@code many-relays}, {@code many-relays-mariadb}. */
  public String experimentName(String base) {
    return base + suffix;
  }

  /** Why this database cannot be used here, or empty. */
  public Optional<String> unavailable() {
    return this == SQLSERVER ? TestDatabases.sqlServerUnavailable() : Optional.empty();
  }

  /** The migrated schema (PostgreSQL) or database (MariaDB, SQL Server) {@code name}. */
  DataSource dataSource(String name) {
    return switch (this) {
      case POSTGRESQL -> TestDatabases.postgres(name);
      case MARIADB -> TestDatabases.mariadb(name);
      case SQLSERVER -> TestDatabases.sqlServer(name);
    };
  }

  /** The relay's connection settings for schema or database {@code name}. */
  Map<String, String> relayConnection(String name) {
    String prefix = "quarkus.datasource." + datasource;
    Map<String, String> p = new LinkedHashMap<>();
    switch (this) {
      case POSTGRESQL -> {
        String url = System.getProperty("outbox.test.pg.url", TestDatabases.DEFAULT_PG_URL);
        p.put(
            prefix + ".jdbc.url", url + (url.contains("?") ? "&" : "?") + "currentSchema=" + name);
        p.put(
            prefix + ".username",
            System.getProperty("outbox.test.pg.user", TestDatabases.DEFAULT_PG_USER));
      }
      case MARIADB -> {
        p.put(prefix + ".jdbc.url", TestDatabases.mariadbUrl(name));
        p.put(prefix + ".username", TestDatabases.mariadbUser());
        p.put(prefix + ".password", TestDatabases.mariadbPassword());
      }
      case SQLSERVER -> p.put(prefix + ".jdbc.url", TestDatabases.sqlServerUrl(name));
    }
    return p;
  }

  /**
   * Fresh statistics after a bulk load, as the database's background jobs keep them on a live
   * table: right after a reset the planner would see a near-empty table.
   */
  void refreshStatistics(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(
          switch (this) {
            case POSTGRESQL -> "ANALYZE outbox_message";
            case MARIADB -> "ANALYZE TABLE outbox_message";
            case SQLSERVER -> "UPDATE STATISTICS outbox_message";
          });
    }
  }
}
