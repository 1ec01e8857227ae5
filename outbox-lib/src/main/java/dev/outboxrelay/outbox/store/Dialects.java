package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.OutboxDialect;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/** The dialect of a data source's database, and the binding of its statements' parameters. */
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

  /**
   * Binds a dialect's parameters in order: times and tokens through the dialect's hooks (a
   * MariaDB DATETIME holds UTC, SQL Server has datetime2 and uniqueidentifier), the rest as is.
   */
  static void bindAll(PreparedStatement ps, List<Object> params, OutboxDialect dialect) throws SQLException {
    for (int i = 0; i < params.size(); i++) {
      Object p = params.get(i);
      if (p instanceof Instant t) {
        dialect.bindInstant(ps, i + 1, t);
      } else if (p instanceof UUID u) {
        dialect.bindUuid(ps, i + 1, u);
      } else {
        ps.setObject(i + 1, p);
      }
    }
  }
}
