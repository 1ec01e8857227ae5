package dev.outboxrelay.relay.testing;

import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import dev.outboxrelay.outbox.store.JdbcOutboxStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.dialect.H2Dialect;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.h2.jdbcx.JdbcDataSource;

/**
 * A private in-memory H2 outbox, migrated, for the relay's store-level unit tests: its store, its
 * admin store, and the store with a test's fault or count around chosen calls ({@link #around}).
 */
public record H2Outbox(
    JdbcDataSource dataSource, JdbcOutboxStore store, JdbcOutboxAdminStore admin) {

  /** What a test does around one call of the store: {@code call} makes the real one. */
  @FunctionalInterface
  public interface Around {
    Object call(String method, Object[] args, Callable<Object> call) throws Throwable;
  }

  /**
   * A new database named {@code name} plus a random suffix, with {@code ready} ready jobs to
   * destination {@code b} ({@code op-0}, {@code op-1}, ...).
   */
  public static H2Outbox withReadyJobs(String name, int ready) throws SQLException {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:" + name + "-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    OutboxSchema.migrate(h2);
    try (Connection c = h2.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO outbox_message (operation_id, destination, payload, content_type) VALUES (?, 'b', '{}', 'application/json')")) {
      for (int i = 0; i < ready; i++) {
        ps.setString(1, "op-" + i);
        ps.executeUpdate();
      }
    }
    return new H2Outbox(
        h2,
        new JdbcOutboxStore(h2, new H2Dialect()),
        new JdbcOutboxAdminStore(h2, new H2Dialect()));
  }

  /** The store, every call of which goes through {@code around}. */
  public OutboxStore around(Around around) {
    return (OutboxStore)
        Proxy.newProxyInstance(
            H2Outbox.class.getClassLoader(),
            new Class<?>[] {OutboxStore.class},
            (proxy, method, args) ->
                around.call(
                    method.getName(),
                    args,
                    () -> {
                      try {
                        return method.invoke(store, args);
                      } catch (InvocationTargetException e) {
                        throw rethrow(e.getCause());
                      }
                    }));
  }

  private static Exception rethrow(Throwable t) {
    if (t instanceof Exception e) {
      return e;
    }
    throw (Error) t;
  }
}
