package dev.outboxrelay.demo.lifecycle;

import dev.outboxrelay.outbox.orm.TransactionalOutbox;
import dev.outboxrelay.outbox.schema.OutboxSchema;
import io.quarkus.runtime.StartupEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Migrates the outbox tables at startup when {@code outbox.migrate-at-start} is true (the default).
 * Safe when relay-service migrates the same database at the same time: Flyway locks the history
 * table. A failure stops the application; it cannot enqueue without the tables. Runs before the
 * broker channels start ({@link DemoSchemaMigrator#BEFORE_CONSUMERS}).
 */
@ApplicationScoped
public class OutboxSchemaMigrator {
  private static final Logger LOG = Logger.getLogger(OutboxSchemaMigrator.class);

  @Inject DataSource dataSource;

  /** Holds the validated {@code outbox.schema} / {@code outbox.table} the jobs are written to. */
  @Inject TransactionalOutbox outbox;

  @ConfigProperty(name = "outbox.migrate-at-start", defaultValue = "true")
  boolean migrateAtStart;

  void onStart(@Observes @Priority(DemoSchemaMigrator.BEFORE_CONSUMERS) StartupEvent event) {
    if (!migrateAtStart) {
      LOG.info("outbox.migrate-at-start=false: expecting the outbox tables to exist");
      return;
    }
    int applied = OutboxSchema.migrate(dataSource, outbox.tables());
    LOG.infof("outbox schema: %d migration(s) applied", applied);
  }
}
