package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** The dialect of a data source's database, for the stores' {@code create} factories. */
final class Dialects {
  private Dialects() {}

  /** Detects the dialect from one connection of {@code dataSource}. */
  static OutboxDialect detect(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return DialectDetector.detect(c.getMetaData());
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot connect to detect the outbox dialect", e);
    }
  }
}
