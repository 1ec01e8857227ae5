package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Creates or upgrades the inbox table with Flyway, from {@code db/inbox/<dialect>/}, with its own
 * history table {@value #HISTORY_TABLE}: independent of the outbox's migrations (a receiver without
 * the outbox migrates only this) and of the application's. Several processes may call it at once.
 */
public final class InboxSchema {
  public static final String HISTORY_TABLE = "outbox_inbox_schema_history";

  private InboxSchema() {}

  /** Migrates the inbox; returns the number of scripts applied (0 when current). */
  public static int migrate(DataSource dataSource) {
    return flyway(dataSource).migrate().migrationsExecuted;
  }

  /** Checks the applied scripts against the ones in this library (throws when they differ). */
  public static void validate(DataSource dataSource) {
    flyway(dataSource).validate();
  }

  static Flyway flyway(DataSource dataSource) {
    Dialect dialect;
    try (Connection c = dataSource.getConnection()) {
      dialect = DialectDetector.forProductName(c.getMetaData().getDatabaseProductName());
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot connect to migrate the inbox schema", e);
    }
    return Flyway.configure(InboxSchema.class.getClassLoader())
        .dataSource(dataSource)
        .locations(dialect.inboxMigrationLocation())
        .table(HISTORY_TABLE)
        .baselineOnMigrate(true)
        .baselineVersion("0")
        .load();
  }
}
