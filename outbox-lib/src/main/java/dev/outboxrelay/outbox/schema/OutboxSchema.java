package dev.outboxrelay.outbox.schema;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.migration.JavaMigration;
import org.flywaydb.core.api.output.MigrateResult;
import org.flywaydb.core.api.resource.LoadableResource;
import org.flywaydb.core.internal.scanner.Scanner;

/**
 * Creates or upgrades the outbox tables with Flyway, from {@code db/outbox/<dialect>/}. The outbox
 * keeps its own history table ({@code <table>_schema_history}: {@value #HISTORY_TABLE} with the
 * default names) so it never collides with the application's migrations; several processes may call
 * this at once (Flyway locks the history).
 *
 * <p>With configured names ({@link OutboxTables}) the scripts are rendered for them as Flyway reads
 * them, and the history table is {@code <table>_schema_history} in the configured schema (created
 * when missing): two outboxes in one database, under different table names or schemas, each have
 * their own tables and their own history, and migrate independently. With the default names the
 * scripts are read unchanged, so databases migrated before names were configurable keep their
 * checksums.
 */
public final class OutboxSchema {
  public static final String HISTORY_TABLE = "outbox_schema_history";

  private OutboxSchema() {}

  /** Migrates the default-named outbox and returns the number of scripts applied. */
  public static int migrate(DataSource dataSource) {
    return migrate(dataSource, OutboxTables.DEFAULT);
  }

  /**
   * Migrates the outbox named by {@code tables}; returns the number of scripts applied (0 when
   * current).
   */
  public static int migrate(DataSource dataSource, OutboxTables tables) {
    Dialect dialect;
    try (Connection c = dataSource.getConnection()) {
      dialect = DialectDetector.detect(c.getMetaData());
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot connect to migrate the outbox schema", e);
    }
    return migrate(dataSource, dialect, tables);
  }

  public static int migrate(DataSource dataSource, Dialect dialect) {
    return migrate(dataSource, dialect, OutboxTables.DEFAULT);
  }

  public static int migrate(DataSource dataSource, Dialect dialect, OutboxTables tables) {
    MigrateResult result =
        configuration(dataSource, dialect, tables, !tables.isDefault()).load().migrate();
    return result.migrationsExecuted;
  }

  /**
   * The Flyway configuration of one outbox; {@code render}: read the scripts through {@link
   * OutboxTables#render} (always for configured names; tests force it for the defaults to show that
   * the rendered scripts have the checksums existing databases recorded).
   */
  static FluentConfiguration configuration(
      DataSource dataSource, Dialect dialect, OutboxTables tables, boolean render) {
    FluentConfiguration config =
        Flyway.configure(OutboxSchema.class.getClassLoader())
            .dataSource(dataSource)
            .locations(dialect.migrationLocation())
            .table(tables.historyTable())
            .baselineOnMigrate(true)
            .baselineVersion("0");
    if (tables.schema().isPresent()) {
      String schema = flywaySchemaName(dataSource, tables.schema().get());
      config.schemas(schema).defaultSchema(schema);
    }
    if (render) {
      config.resourceProvider(
          new RenderingResources(
              new Scanner<>(JavaMigration.class, config, config.getLocations()), tables));
    }
    return config;
  }

  /**
   * Flyway quotes the schema it creates, while the rendered scripts name it unquoted: on a database
   * that folds unquoted names to upper case (H2) Flyway must be given the folded name.
   */
  private static String flywaySchemaName(DataSource dataSource, String schema) {
    try (Connection c = dataSource.getConnection()) {
      DatabaseMetaData md = c.getMetaData();
      return md.storesUpperCaseIdentifiers() ? schema.toUpperCase(Locale.ROOT) : schema;
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot connect to migrate the outbox schema", e);
    }
  }

  /** The migration scripts Flyway finds, rendered for {@code tables} when read. */
  private record RenderingResources(ResourceProvider scripts, OutboxTables tables)
      implements ResourceProvider {
    @Override
    public LoadableResource getResource(String name) {
      LoadableResource r = scripts.getResource(name);
      return r == null ? null : new Rendered(r, tables);
    }

    @Override
    public Collection<LoadableResource> getResources(String prefix, String[] suffixes) {
      return scripts.getResources(prefix, suffixes).stream()
          .<LoadableResource>map(r -> new Rendered(r, tables))
          .toList();
    }
  }

  /** One script, rendered for the configured names (its checksum is the rendered text's). */
  private static final class Rendered extends LoadableResource {
    private final LoadableResource script;
    private final OutboxTables tables;

    Rendered(LoadableResource script, OutboxTables tables) {
      this.script = script;
      this.tables = tables;
    }

    @Override
    public Reader read() {
      StringWriter text = new StringWriter();
      try (Reader in = script.read()) {
        in.transferTo(text);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read outbox migration " + script.getFilename(), e);
      }
      return new StringReader(tables.render(text.toString()));
    }

    @Override
    public String getAbsolutePath() {
      return script.getAbsolutePath();
    }

    @Override
    public String getAbsolutePathOnDisk() {
      return script.getAbsolutePathOnDisk();
    }

    @Override
    public String getFilename() {
      return script.getFilename();
    }

    @Override
    public String getRelativePath() {
      return script.getRelativePath();
    }
  }

  /** For tests: the script names of {@code dialect}'s migrations. */
  static List<String> scriptNames(Dialect dialect) {
    FluentConfiguration config =
        Flyway.configure(OutboxSchema.class.getClassLoader())
            .locations(dialect.migrationLocation());
    return new Scanner<>(JavaMigration.class, config, config.getLocations())
        .getResources("V", new String[] {".sql"}).stream()
            .map(LoadableResource::getFilename)
            .sorted()
            .toList();
  }
}
