package dev.outboxrelay.outbox.store.dialect;

import dev.outboxrelay.outbox.OutboxException;
import java.lang.System.Logger.Level;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

/** Chooses a dialect from the connection's metadata and logs the choice. */
public final class DialectDetector {
  private static final System.Logger LOG = System.getLogger(DialectDetector.class.getName());

  private DialectDetector() {}

  public static OutboxDialect detect(DatabaseMetaData metaData) throws SQLException {
    String product = metaData.getDatabaseProductName();
    OutboxDialect dialect = forProductName(product);
    LOG.log(Level.INFO, "outbox dialect {0} for {1} {2}", dialect.name(), product,
        metaData.getDatabaseProductVersion());
    return dialect;
  }

  /**
   * Resolves a product name (as reported by JDBC: {@code PostgreSQL}, {@code H2}, {@code MariaDB},
   * {@code Microsoft SQL Server}) or a dialect name ({@code postgresql}, {@code h2}, {@code
   * mariadb}, {@code sqlserver}).
   */
  public static OutboxDialect forProductName(String product) {
    String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (p.contains("postgres")) {
      return new PostgresOutboxDialect();
    }
    if (p.equals("h2")) {
      return new H2OutboxDialect();
    }
    if (p.equals("mariadb")) {
      return new MariaDbOutboxDialect();
    }
    // The driver reports "Microsoft SQL Server" (Azure SQL too).
    if (p.equals("microsoft sql server") || p.equals("sqlserver")) {
      return new SqlServerOutboxDialect();
    }
    throw new OutboxException("unsupported database '" + product + "'; supported: " + SUPPORTED);
  }

  /** The databases {@link #forProductName} accepts, for messages. */
  public static final String SUPPORTED = "PostgreSQL, H2, MariaDB, Microsoft SQL Server";
}
