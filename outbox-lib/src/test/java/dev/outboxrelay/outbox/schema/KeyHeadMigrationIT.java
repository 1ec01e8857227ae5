package dev.outboxrelay.outbox.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.outbox.testing.TestDatabases;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * V6 on a table that already holds jobs: a ready job waits ({@code key_wait}) exactly when an
 * earlier job of its key is ready or leased, whatever finished jobs (sent, dead) lie before it.
 * Each database starts from the scripts before V6 in a place of its own, gets rows, then V6.
 */
class KeyHeadMigrationIT {
  private static final String NAME = "key_head_migration_it";

  @Test
  void h2() throws SQLException {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL("jdbc:h2:mem:" + NAME + "-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    ds.setUser("sa");
    migratesExistingRows(ds, "h2");
  }

  @Test
  void postgresql() throws SQLException {
    DataSource admin = TestDatabases.postgres();
    TestDatabases.execute(admin, "DROP SCHEMA IF EXISTS " + NAME + " CASCADE");
    TestDatabases.execute(admin, "CREATE SCHEMA " + NAME);
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(System.getProperty("outbox.test.pg.url", TestDatabases.DEFAULT_PG_URL));
    ds.setUser(System.getProperty("outbox.test.pg.user", TestDatabases.DEFAULT_PG_USER));
    ds.setCurrentSchema(NAME);
    migratesExistingRows(ds, "postgresql");
  }

  @Test
  void mariadb() throws SQLException {
    DataSource any = TestDatabases.mariadb("outbox_lib_it");
    TestDatabases.execute(any, "DROP DATABASE IF EXISTS " + NAME);
    TestDatabases.execute(
        any, "CREATE DATABASE " + NAME + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
    MariaDbDataSource ds = new MariaDbDataSource(TestDatabases.mariadbUrl(NAME));
    ds.setUser(TestDatabases.mariadbUser());
    ds.setPassword(TestDatabases.mariadbPassword());
    migratesExistingRows(ds, "mariadb");
  }

  private static void migratesExistingRows(DataSource ds, String dialect) throws SQLException {
    // The last script before V6: V5 on PostgreSQL (its notification scripts), V3 elsewhere.
    flyway(ds, dialect).target("postgresql".equals(dialect) ? "5" : "3").load().migrate();
    Map<String, Character> rows = new LinkedHashMap<>();
    rows.put("a1", 'S');
    rows.put("a2", 'R');
    rows.put("b1", 'W');
    rows.put("a3", 'R');
    rows.put("b2", 'R');
    rows.put("c1", 'D');
    rows.put("c2", 'R');
    rows.put("none", 'R');
    rows.put("c3", 'R');
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO outbox_message (operation_id, destination, ordering_key, payload, content_type,"
                    + " state, claim_token) VALUES (?, 'http:billing', ?, '{}', 'application/json', ?, ?)")) {
      for (Map.Entry<String, Character> r : rows.entrySet()) {
        ps.setString(1, "migrated-" + r.getKey());
        ps.setString(2, r.getKey().equals("none") ? null : r.getKey().substring(0, 1));
        ps.setString(3, String.valueOf(r.getValue()));
        UUID token = r.getValue() == 'W' ? UUID.randomUUID() : null;
        TestDatabases.dialect(ds).binding().bindUuid(ps, 4, token);
        ps.executeUpdate();
      }
    }
    flyway(ds, dialect).load().migrate();

    Map<String, Long> waiting = new LinkedHashMap<>();
    for (String op : rows.keySet()) {
      waiting.put(
          op,
          TestDatabases.queryLong(
              ds,
              "SELECT COUNT(*) FROM outbox_message WHERE operation_id = ? AND key_wait = "
                  + ("mariadb".equals(dialect) ? "1" : "TRUE"),
              "migrated-" + op));
    }
    // a2 follows a sent job, c2 a dead one: heads; a3 and b2 wait behind a2 and the leased b1;
    // c3 waits behind c2; finished and keyless jobs never wait.
    assertEquals(
        Map.of(
            "a1", 0L, "a2", 0L, "b1", 0L, "a3", 1L, "b2", 1L, "c1", 0L, "c2", 0L, "none", 0L, "c3",
            1L),
        waiting);
  }

  private static FluentConfiguration flyway(DataSource ds, String dialect) {
    return Flyway.configure(KeyHeadMigrationIT.class.getClassLoader())
        .dataSource(ds)
        .locations("classpath:db/outbox/" + dialect)
        .table(OutboxSchema.HISTORY_TABLE);
  }
}
