package dev.outboxrelay.outbox.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.testing.TestDatabases;
import java.util.Arrays;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.output.ValidateResult;
import org.junit.jupiter.api.Test;

/**
 * Databases migrated before names were configurable must not see a checksum mismatch: the scripts
 * rendered for the default names ({@link OutboxTables#render}) validate against the history the
 * plain scripts wrote, on a fresh H2 database and on the PostgreSQL and MariaDB outboxes the store
 * contract tests keep.
 */
class RenderedChecksumsIT {

  @Test
  void renderedDefaultScriptsValidateAgainstAFreshH2History() {
    assertRenderedScriptsValidate(TestDatabases.h2());
  }

  @Test
  void renderedDefaultScriptsValidateAgainstExistingPostgresqlAndMariaDbHistories() {
    assertRenderedScriptsValidate(TestDatabases.postgres());
    assertRenderedScriptsValidate(TestDatabases.mariadb("outbox_lib_store_it"));
  }

  private static void assertRenderedScriptsValidate(DataSource ds) {
    Flyway rendered =
        OutboxSchema.configuration(ds, TestDatabases.dialect(ds), OutboxTables.DEFAULT, true)
            .load();
    ValidateResult result = rendered.validateWithResult();
    assertTrue(
        result.validationSuccessful, TestDatabases.product(ds) + ": " + result.invalidMigrations);
    MigrationInfo[] applied = rendered.info().applied();
    assertTrue(
        Arrays.stream(applied)
                .filter(m -> m.getVersion() != null && m.getChecksum() != null)
                .count()
            >= 3,
        "the history holds the applied scripts: " + Arrays.toString(applied));
    assertEquals(0, rendered.info().pending().length, "nothing pending");
  }
}
