package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.jdbc.JdbcStatements;
import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.store.dialect.Dialect;
import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import dev.outboxrelay.outbox.store.dialect.ReconciliationStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * {@link FleetLock} over JDBC: one row per lock name in the outbox's lock table. Statements come
 * from the dialect's {@link ReconciliationStatements}; SQL errors become {@link
 * OutboxStoreException} naming the lock and owner.
 */
public class JdbcFleetLock implements FleetLock {
  private final DataSource dataSource;
  private final Dialect dialect;
  private final ReconciliationStatements statements;

  public JdbcFleetLock(DataSource dataSource, Dialect dialect) {
    this(dataSource, dialect, OutboxTables.DEFAULT);
  }

  /**
   * The locks of the outbox named by {@code tables}: its statements are rendered for those names.
   */
  public JdbcFleetLock(DataSource dataSource, Dialect dialect, OutboxTables tables) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.dialect = Objects.requireNonNull(dialect, "dialect");
    this.statements = dialect.reconciliation(Objects.requireNonNull(tables, "tables"));
  }

  /** Detects the dialect from one connection of {@code dataSource}. */
  public static JdbcFleetLock create(DataSource dataSource) {
    return create(dataSource, OutboxTables.DEFAULT);
  }

  /**
   * Detects the dialect from one connection of {@code dataSource}; the outbox named by {@code
   * tables}.
   */
  public static JdbcFleetLock create(DataSource dataSource, OutboxTables tables) {
    return new JdbcFleetLock(dataSource, Dialects.detect(dataSource), tables);
  }

  @Override
  public boolean acquire(String name, String owner, Duration leaseFor) {
    String what = "acquisition of lock '" + name + "' by " + owner;
    int taken =
        update(
            what,
            statements.takeLockSql(),
            ps -> {
              ps.setString(1, owner);
              ps.setLong(2, leaseFor.toMillis());
              ps.setString(3, name);
              ps.setString(4, owner);
            });
    if (taken == 1) {
      return true;
    }
    try (Connection c = JdbcStatements.autoCommitConnection(dataSource);
        PreparedStatement ps = c.prepareStatement(statements.insertLockSql())) {
      ps.setString(1, name);
      ps.setString(2, owner);
      ps.setLong(3, leaseFor.toMillis());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      if (dialect.errors().isUniqueViolation(e)) {
        return false; // created by a concurrent contender, whose lease is live
      }
      throw new OutboxStoreException(what + " failed", e);
    }
  }

  @Override
  public boolean renew(String name, String owner, Duration leaseFor) {
    return update(
            "renewal of lock '" + name + "' by " + owner,
            statements.renewLockSql(),
            ps -> {
              ps.setLong(1, leaseFor.toMillis());
              ps.setString(2, name);
              ps.setString(3, owner);
            })
        == 1;
  }

  @Override
  public void release(String name, String owner) {
    update(
        "release of lock '" + name + "' by " + owner,
        statements.releaseLockSql(),
        ps -> {
          ps.setString(1, name);
          ps.setString(2, owner);
        });
  }

  @Override
  public Optional<LockHolder> holder(String name) {
    return JdbcStatements.query(
            dataSource,
            "read of lock '" + name + "'",
            statements.lockHolderSql(),
            ps -> ps.setString(1, name),
            rs ->
                new LockHolder(
                    name,
                    rs.getString(1),
                    dialect.binding().readInstant(rs, 2),
                    dialect.binding().readInstant(rs, 3)))
        .stream()
        .findFirst();
  }

  private int update(String what, String sql, Binder binder) {
    return JdbcStatements.update(
        dataSource, dialect.errors()::isRetryableConflict, what, sql, binder);
  }
}
