package dev.outboxrelay.outbox.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The JDBC decorator: every way a statement's text reaches the driver is rendered. */
class TableRenderingTest {
  private static final OutboxTables ORDERS = OutboxTables.of("names_it", "orders");

  /** What the "driver" was given, in order. */
  private final List<String> seen = new ArrayList<>();

  @Test
  void preparedCallableStatementAndBatchTextIsRendered() throws SQLException {
    DataSource ds = TableRendering.dataSource(dataSource(), ORDERS);
    try (Connection c = ds.getConnection()) {
      c.prepareStatement("SELECT id FROM outbox_message WHERE id = ?");
      c.prepareStatement("DELETE FROM outbox_attempt", Statement.RETURN_GENERATED_KEYS);
      c.prepareCall("CALL x(?) -- outbox_lock");
      c.nativeSQL("SELECT 1 FROM outbox_payload");
      Statement s = c.createStatement();
      s.execute("DELETE FROM outbox_confirmation");
      s.executeUpdate("DELETE FROM outbox_reconciliation_item");
      s.executeQuery("SELECT 1 FROM outbox_reconciliation_run");
      s.addBatch("LISTEN outbox_ready");
    }
    assertEquals(
        List.of(
            "SELECT id FROM names_it.orders_message WHERE id = ?",
            "DELETE FROM names_it.orders_attempt",
            "CALL x(?) -- names_it.orders_lock",
            "SELECT 1 FROM names_it.orders_payload",
            "DELETE FROM names_it.orders_confirmation",
            "DELETE FROM names_it.orders_reconciliation_item",
            "SELECT 1 FROM names_it.orders_reconciliation_run",
            "LISTEN orders_ready"),
        seen);
  }

  @Test
  void anUnknownOutboxNameNeverReachesTheDriver() throws SQLException {
    try (Connection c = TableRendering.of(ORDERS).connection(connection())) {
      assertThrows(
          IllegalStateException.class, () -> c.prepareStatement("SELECT 1 FROM outbox_audit"));
    }
    assertEquals(List.of(), seen);
  }

  @Test
  void theDefaultsWrapNothing() throws SQLException {
    DataSource ds = dataSource();
    assertSame(ds, TableRendering.dataSource(ds, OutboxTables.DEFAULT));
    Connection c = connection();
    assertSame(c, TableRendering.of(OutboxTables.DEFAULT).connection(c));
  }

  @Test
  void unwrapToTheDecoratedInterfaceKeepsRendering() throws SQLException {
    Connection c = TableRendering.of(ORDERS).connection(connection());
    assertSame(c, c.unwrap(Connection.class));
    c.unwrap(Connection.class).prepareStatement("SELECT 1 FROM outbox_message");
    assertTrue(seen.contains("SELECT 1 FROM names_it.orders_message"), seen.toString());
  }

  private DataSource dataSource() {
    return (DataSource)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) ->
                method.getName().equals("getConnection") ? connection() : null);
  }

  /** Records the text of every statement; answers the rest with nulls or a recording Statement. */
  private Connection connection() {
    return (Connection)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("createStatement")) {
                return Proxy.newProxyInstance(
                    getClass().getClassLoader(),
                    new Class<?>[] {Statement.class},
                    (p, m, a) -> {
                      if (a != null && a.length > 0 && a[0] instanceof String sql) {
                        seen.add(sql);
                      }
                      return m.getReturnType() == boolean.class
                          ? false
                          : m.getReturnType() == int.class ? 0 : null;
                    });
              }
              if (args != null && args.length > 0 && args[0] instanceof String sql) {
                seen.add(sql);
                return method.getReturnType() == String.class ? sql : null;
              }
              if (method.getName().equals("unwrap")) {
                return proxy;
              }
              return method.getReturnType() == boolean.class ? false : null;
            });
  }
}
