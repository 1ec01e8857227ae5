package dev.outboxrelay.outbox.store.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.outboxrelay.outbox.error.OutboxException;
import java.lang.reflect.Proxy;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DialectDetectorTest {

  @ParameterizedTest
  @ValueSource(strings = {"PostgreSQL", "postgresql", "POSTGRESQL"})
  void postgresProductNamesMapToThePostgresDialect(String product) {
    Dialect dialect = DialectDetector.forProductName(product);
    assertInstanceOf(PostgresDialect.class, dialect);
    assertEquals("postgresql", dialect.name());
    assertEquals("classpath:db/outbox/postgresql", dialect.migrationLocation());
  }

  @ParameterizedTest
  @ValueSource(strings = {"H2", "h2"})
  void h2ProductNamesMapToTheH2Dialect(String product) {
    Dialect dialect = DialectDetector.forProductName(product);
    assertInstanceOf(H2Dialect.class, dialect);
    assertEquals("h2", dialect.name());
    assertEquals("classpath:db/outbox/h2", dialect.migrationLocation());
  }

  @ParameterizedTest
  @ValueSource(strings = {"MariaDB", "mariadb"})
  void mariaDbProductNamesMapToTheMariaDbDialect(String product) {
    Dialect dialect = DialectDetector.forProductName(product);
    assertInstanceOf(MariaDbDialect.class, dialect);
    assertEquals("mariadb", dialect.name());
    assertEquals("classpath:db/outbox/mariadb", dialect.migrationLocation());
  }

  @ParameterizedTest
  @ValueSource(strings = {"Microsoft SQL Server", "MICROSOFT SQL SERVER", "sqlserver"})
  void sqlServerProductNamesMapToTheSqlServerDialect(String product) {
    Dialect dialect = DialectDetector.forProductName(product);
    assertInstanceOf(SqlServerDialect.class, dialect);
    assertEquals("sqlserver", dialect.name());
    assertEquals("classpath:db/outbox/sqlserver", dialect.migrationLocation());
  }

  /** MySQL has no INSERT ... RETURNING, which the MariaDB dialect relies on. */
  @ParameterizedTest
  @ValueSource(strings = {"MySQL", "Oracle", "HSQL Database Engine", "H2X", "SQL Server Express"})
  void unknownProductIsRejectedNamingItAndTheSupportedOnes(String product) {
    OutboxException e =
        assertThrows(OutboxException.class, () -> DialectDetector.forProductName(product));
    assertEquals(
        "unsupported database '"
            + product
            + "'; supported: PostgreSQL, H2, MariaDB,"
            + " Microsoft SQL Server",
        e.getMessage());
  }

  @Test
  void missingProductNameIsRejected() {
    OutboxException e =
        assertThrows(OutboxException.class, () -> DialectDetector.forProductName(null));
    assertEquals(
        "unsupported database 'null'; supported: PostgreSQL, H2, MariaDB, Microsoft SQL Server",
        e.getMessage());
  }

  @Test
  void detectReadsTheProductNameFromTheMetadata() throws SQLException {
    assertInstanceOf(
        PostgresDialect.class, DialectDetector.detect(metaData("PostgreSQL", "15.20")));
    assertInstanceOf(H2Dialect.class, DialectDetector.detect(metaData("H2", "2.5.252")));
    assertInstanceOf(MariaDbDialect.class, DialectDetector.detect(metaData("MariaDB", "10.11.19")));
    assertInstanceOf(
        SqlServerDialect.class,
        DialectDetector.detect(metaData("Microsoft SQL Server", "16.00.4135")));
    assertThrows(OutboxException.class, () -> DialectDetector.detect(metaData("MySQL", "8.4.0")));
  }

  /**
   * One registry: every name it lists resolves to the dialect of that name, so the relay's
   * datasources, the migration folders and the dialects cannot disagree (the relay's SQL Server
   * datasource was once called {@code mssql} while its dialect said {@code sqlserver}).
   */
  @Test
  void everyListedNameResolvesToTheDialectOfThatName() {
    assertEquals(List.of("h2", "postgresql", "mariadb", "sqlserver"), DialectDetector.names());
    for (String name : DialectDetector.names()) {
      assertEquals(name, DialectDetector.forProductName(name).name());
    }
  }

  /** Metadata that answers only the two questions the detector asks. */
  private static DatabaseMetaData metaData(String product, String version) {
    return (DatabaseMetaData)
        Proxy.newProxyInstance(
            DatabaseMetaData.class.getClassLoader(),
            new Class<?>[] {DatabaseMetaData.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "getDatabaseProductName" -> product;
                  case "getDatabaseProductVersion" -> version;
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }
}
