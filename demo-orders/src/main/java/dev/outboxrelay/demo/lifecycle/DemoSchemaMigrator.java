package dev.outboxrelay.demo.lifecycle;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.flywaydb.core.Flyway;
import org.jboss.logging.Logger;

/**
 * Migrates the demo's own tables (orders, sink ledger, invoices) at startup when {@code
 * demo.schema.migrate-at-start} is true (the default), from {@code db/demo/<kind>/} with the
 * default history table {@value #HISTORY_TABLE}. The kind follows the database the datasource
 * reaches ({@code h2}, {@code postgresql} or {@code mssql}), which is the build's {@code
 * quarkus.datasource.db-kind}.
 *
 * <p>Plain Flyway, as outbox-lib migrates the outbox tables, rather than the Quarkus Flyway
 * extension: that extension pulls a Flyway module per JDBC extension, which ties the demo's
 * dependencies to the database kinds it can be built for. A failure stops the application.
 */
@ApplicationScoped
public class DemoSchemaMigrator {
  private static final Logger LOG = Logger.getLogger(DemoSchemaMigrator.class);

  public static final String HISTORY_TABLE = "flyway_schema_history";
  /** Where each kind's scripts live: {@code db/demo/<kind>}. */
  public static final String LOCATION_PREFIX = "classpath:db/demo/";

  @Inject DataSource dataSource;

  @ConfigProperty(name = "demo.schema.migrate-at-start", defaultValue = "true")
  boolean migrateAtStart;

  void onStart(@Observes StartupEvent event) {
    if (!migrateAtStart) {
      LOG.info("demo.schema.migrate-at-start=false: expecting the demo tables to exist");
      return;
    }
    String kind;
    try (Connection c = dataSource.getConnection()) {
      kind = kindOf(c.getMetaData().getDatabaseProductName());
    } catch (SQLException e) {
      throw new IllegalStateException("cannot connect to migrate the demo tables", e);
    }
    int applied = Flyway.configure(DemoSchemaMigrator.class.getClassLoader())
        .dataSource(dataSource)
        .locations(LOCATION_PREFIX + kind)
        .table(HISTORY_TABLE)
        // The schema may already hold the outbox tables (relay-service migrated first): baseline
        // at 0 so that V1 still runs instead of Flyway refusing a non-empty schema.
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .load()
        .migrate()
        .migrationsExecuted;
    LOG.infof("demo schema (%s): %d migration(s) applied", kind, applied);
  }

  /** The migrations directory for a JDBC {@code DatabaseMetaData} product name. */
  static String kindOf(String productName) {
    String name = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
    if (name.equals("h2")) {
      return "h2";
    }
    if (name.equals("postgresql")) {
      return "postgresql";
    }
    if (name.contains("sql server")) {
      return "mssql";
    }
    throw new IllegalStateException("the demo has no migrations for database '" + productName
        + "'; supported: H2, PostgreSQL, Microsoft SQL Server (db/demo/h2, postgresql, mssql)");
  }
}
