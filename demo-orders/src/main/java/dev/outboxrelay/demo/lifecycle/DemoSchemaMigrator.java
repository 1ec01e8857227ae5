package dev.outboxrelay.demo.lifecycle;

import dev.outboxrelay.outbox.inbox.InboxSchema;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.interceptor.Interceptor;
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
 *
 * <p>Then the sink's inbox table ({@code outbox_inbox}, outbox-lib's {@link InboxSchema}, history
 * table {@code outbox_inbox_schema_history}). Both run at {@link #BEFORE_CONSUMERS}: before
 * SmallRye Reactive Messaging starts the broker channels, so that no consumer receives before its
 * tables exist.
 */
@ApplicationScoped
public class DemoSchemaMigrator {
  private static final Logger LOG = Logger.getLogger(DemoSchemaMigrator.class);

  public static final String HISTORY_TABLE = "flyway_schema_history";

  /** Where each kind's scripts live: {@code db/demo/<kind>}. */
  public static final String LOCATION_PREFIX = "classpath:db/demo/";

  /**
   * The start-up observers' priority for the schema: before Quarkus starts the messaging channels
   * (its observer runs at {@code Interceptor.Priority.LIBRARY_BEFORE}). At the default priority the
   * Kafka and RabbitMQ consumers of a fresh database received before {@code outbox_inbox} existed:
   * every such message failed (368 requeues in the first receiver of
   * BillingConsumersRabbitMqKillIT), and on Kafka a record still failing after the delayed retries
   * would be dead-lettered.
   */
  public static final int BEFORE_CONSUMERS = Interceptor.Priority.PLATFORM_BEFORE;

  @Inject DataSource dataSource;

  @ConfigProperty(name = "demo.schema.migrate-at-start", defaultValue = "true")
  boolean migrateAtStart;

  void onStart(@Observes @Priority(BEFORE_CONSUMERS) StartupEvent event) {
    if (!migrateAtStart) {
      LOG.info("demo.schema.migrate-at-start=false: expecting the demo and inbox tables to exist");
      return;
    }
    String kind;
    try (Connection c = dataSource.getConnection()) {
      kind = kindOf(c.getMetaData().getDatabaseProductName());
    } catch (SQLException e) {
      throw new IllegalStateException("cannot connect to migrate the demo tables", e);
    }
    int applied =
        Flyway.configure(DemoSchemaMigrator.class.getClassLoader())
            .dataSource(dataSource)
            .locations(LOCATION_PREFIX + kind)
            .table(HISTORY_TABLE)
            // The schema may already hold the outbox tables (relay-service migrated first):
            // baseline
            // at 0 so that V1 still runs instead of Flyway refusing a non-empty schema.
            .baselineOnMigrate(true)
            .baselineVersion("0")
            .load()
            .migrate()
            .migrationsExecuted;
    LOG.infof("demo schema (%s): %d migration(s) applied", kind, applied);
    LOG.infof("inbox schema: %d migration(s) applied", InboxSchema.migrate(dataSource));
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
    throw new IllegalStateException(
        "the demo has no migrations for database '"
            + productName
            + "'; supported: H2, PostgreSQL, Microsoft SQL Server (db/demo/h2, postgresql, mssql)");
  }
}
