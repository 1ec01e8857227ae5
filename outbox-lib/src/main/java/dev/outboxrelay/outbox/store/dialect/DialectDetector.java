package dev.outboxrelay.outbox.store.dialect;

import dev.outboxrelay.outbox.error.OutboxException;
import java.lang.System.Logger.Level;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;

/**
 * The one registry of supported databases: chooses a {@link Dialect} from a connection's metadata
 * (and logs the choice) or from a name. The stores, the reconciliation, the inbox and the relay's
 * datasources all resolve databases here.
 */
public final class DialectDetector {
  private static final System.Logger LOG = System.getLogger(DialectDetector.class.getName());

  /** The names of the supported databases ({@link Dialect#name()}), in this order. */
  private static final List<String> NAMES = List.of("h2", "postgresql", "mariadb", "sqlserver");

  /** The databases {@link #forProductName} accepts, for messages. */
  public static final String SUPPORTED = "PostgreSQL, H2, MariaDB, Microsoft SQL Server";

  private DialectDetector() {}

  /**
   * The names of the supported databases: each dialect's {@link Dialect#name()}, its migration
   * folders ({@code db/outbox/<name>}, {@code db/inbox/<name>}) and the relay's datasource of that
   * database.
   */
  public static List<String> names() {
    return NAMES;
  }

  public static Dialect detect(DatabaseMetaData metaData) throws SQLException {
    String product = metaData.getDatabaseProductName();
    Dialect dialect = forProductName(product);
    LOG.log(
        Level.INFO,
        "outbox dialect {0} for {1} {2}",
        dialect.name(),
        product,
        metaData.getDatabaseProductVersion());
    return dialect;
  }

  /**
   * Resolves a product name (as reported by JDBC: {@code PostgreSQL}, {@code H2}, {@code MariaDB},
   * {@code Microsoft SQL Server}) or a dialect name ({@link #names()}).
   */
  public static Dialect forProductName(String product) {
    String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (p.contains("postgres")) {
      return new PostgresDialect();
    }
    if (p.equals("h2")) {
      return new H2Dialect();
    }
    if (p.equals("mariadb")) {
      return new MariaDbDialect();
    }
    // The driver reports "Microsoft SQL Server" (Azure SQL too).
    if (p.equals("microsoft sql server") || p.equals("sqlserver")) {
      return new SqlServerDialect();
    }
    throw new OutboxException("unsupported database '" + product + "'; supported: " + SUPPORTED);
  }
}
