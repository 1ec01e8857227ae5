package dev.outboxrelay.outbox.store.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.outboxrelay.outbox.OutboxException;
import java.lang.reflect.Proxy;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DialectDetectorTest {

  @ParameterizedTest
  @ValueSource(strings = {"PostgreSQL", "postgresql", "POSTGRESQL"})
  void postgresProductNamesMapToThePostgresDialect(String product) {
    OutboxDialect dialect = DialectDetector.forProductName(product);
    assertInstanceOf(PostgresOutboxDialect.class, dialect);
    assertEquals("postgresql", dialect.name());
    assertEquals("classpath:db/outbox/postgresql", dialect.migrationLocation());
  }

  @ParameterizedTest
  @ValueSource(strings = {"H2", "h2"})
  void h2ProductNamesMapToTheH2Dialect(String product) {
    OutboxDialect dialect = DialectDetector.forProductName(product);
    assertInstanceOf(H2OutboxDialect.class, dialect);
    assertEquals("h2", dialect.name());
    assertEquals("classpath:db/outbox/h2", dialect.migrationLocation());
  }

  @ParameterizedTest
  @ValueSource(strings = {"Microsoft SQL Server", "MariaDB", "MySQL", "Oracle", "HSQL Database Engine", "H2X"})
  void unknownProductIsRejectedNamingItAndTheSupportedOnes(String product) {
    OutboxException e = assertThrows(OutboxException.class, () -> DialectDetector.forProductName(product));
    assertEquals("unsupported database '" + product + "'; supported: PostgreSQL, H2", e.getMessage());
  }

  @Test
  void missingProductNameIsRejected() {
    OutboxException e = assertThrows(OutboxException.class, () -> DialectDetector.forProductName(null));
    assertEquals("unsupported database 'null'; supported: PostgreSQL, H2", e.getMessage());
  }

  @Test
  void detectReadsTheProductNameFromTheMetadata() throws SQLException {
    assertInstanceOf(PostgresOutboxDialect.class, DialectDetector.detect(metaData("PostgreSQL", "15.20")));
    assertInstanceOf(H2OutboxDialect.class, DialectDetector.detect(metaData("H2", "2.5.252")));
    assertThrows(OutboxException.class, () -> DialectDetector.detect(metaData("Microsoft SQL Server", "16")));
  }

  /** Metadata that answers only the two questions the detector asks. */
  private static DatabaseMetaData metaData(String product, String version) {
    return (DatabaseMetaData) Proxy.newProxyInstance(DatabaseMetaData.class.getClassLoader(),
        new Class<?>[] {DatabaseMetaData.class}, (proxy, method, args) -> switch (method.getName()) {
          case "getDatabaseProductName" -> product;
          case "getDatabaseProductVersion" -> version;
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }
}
