package dev.outboxrelay.outbox.schema;

import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Creates or upgrades the outbox tables with Flyway, from {@code db/outbox/<dialect>/}. The
 * outbox keeps its own history table ({@value #HISTORY_TABLE}) so it never collides with the
 * application's migrations; several processes may call this at once (Flyway locks the history).
 */
public final class OutboxSchema {
  public static final String HISTORY_TABLE = "outbox_schema_history";

  private OutboxSchema() {}

  /** Migrates and returns the number of scripts applied (0 when already current). */
  public static int migrate(DataSource dataSource) {
    OutboxDialect dialect;
    try (Connection c = dataSource.getConnection()) {
      dialect = DialectDetector.detect(c.getMetaData());
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot connect to migrate the outbox schema", e);
    }
    return migrate(dataSource, dialect);
  }

  public static int migrate(DataSource dataSource, OutboxDialect dialect) {
    MigrateResult result = Flyway.configure(OutboxSchema.class.getClassLoader())
        .dataSource(dataSource)
        .locations(dialect.migrationLocation())
        .table(HISTORY_TABLE)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .load()
        .migrate();
    return result.migrationsExecuted;
  }
}
