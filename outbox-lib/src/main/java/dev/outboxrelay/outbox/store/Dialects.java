package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.TypeBinding;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;

/** The dialect of a data source's database, and running a dialect's bound statements. */
final class Dialects {
  private Dialects() {}

  /** Detects the dialect from one connection of {@code dataSource}. */
  static Dialect detect(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return DialectDetector.detect(c.getMetaData());
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot connect to detect the outbox dialect", e);
    }
  }

  /** Runs a bound query on {@code c} and maps every row ({@link Rows#list}). */
  static <T> List<T> query(Connection c, BoundSql sql, TypeBinding binding, Rows.Mapper<T> mapper)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
      binding.bindAll(ps, sql.params());
      return Rows.list(ps, mapper);
    }
  }

  /** Runs a bound statement whose rows may follow update counts ({@link Rows#listAfterCounts}). */
  static <T> List<T> queryAfterCounts(
      Connection c, BoundSql sql, TypeBinding binding, Rows.Mapper<T> mapper) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
      binding.bindAll(ps, sql.params());
      return Rows.listAfterCounts(ps, mapper);
    }
  }

  /** Runs a bound update on {@code c}; returns the update count. */
  static int update(Connection c, BoundSql sql, TypeBinding binding) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql.sql())) {
      binding.bindAll(ps, sql.params());
      return ps.executeUpdate();
    }
  }
}
