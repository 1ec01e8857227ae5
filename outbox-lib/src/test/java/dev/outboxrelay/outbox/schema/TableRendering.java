package dev.outboxrelay.outbox.schema;

import dev.outboxrelay.outbox.store.dialect.OutboxTables;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * For tests: a data source or connection whose statements ({@code prepareStatement}, {@code
 * prepareCall}, {@code createStatement().execute...}) are rendered by {@link OutboxTables#render}
 * before they reach the driver, so a test's own SQL, written with the default names, reaches the
 * outbox under test. The stores do not need it: their statement sets are rendered for the
 * configured names when a store is made ({@code store.dialect.Dialect#jobs}). Each distinct
 * statement is rendered once and cached; an unknown {@code outbox_*} name fails the statement
 * before it runs.
 *
 * <p>With {@link OutboxTables#DEFAULT} nothing is wrapped: the driver sees exactly what it saw
 * before names became configurable.
 */
public final class TableRendering {
  /** Bounds the cache should a caller ever pass text with values in it (they bind parameters). */
  private static final int MAX_CACHED = 2048;

  private static final Set<String> STATEMENT_SQL_METHODS =
      Set.of("execute", "executeQuery", "executeUpdate", "executeLargeUpdate", "addBatch");

  private final OutboxTables tables;
  private final Map<String, String> rendered = new ConcurrentHashMap<>();

  private TableRendering(OutboxTables tables) {
    this.tables = tables;
  }

  /** {@code dataSource} whose connections render for {@code tables}; itself for the defaults. */
  public static DataSource dataSource(DataSource dataSource, OutboxTables tables) {
    if (tables.isDefault()) {
      return dataSource;
    }
    return new TableRendering(tables).wrapDataSource(dataSource);
  }

  /** A renderer for {@code tables}, for connections that come from the caller. */
  public static TableRendering of(OutboxTables tables) {
    return new TableRendering(tables);
  }

  /** {@code connection} rendering this renderer's names; itself for the defaults. */
  public Connection connection(Connection connection) {
    return tables.isDefault() ? connection : wrap(Connection.class, connection);
  }

  /** {@link OutboxTables#render}, cached. */
  public String render(String sql) {
    String r = rendered.get(sql);
    if (r == null) {
      r = tables.render(sql);
      if (rendered.size() < MAX_CACHED) {
        rendered.put(sql, r);
      }
    }
    return r;
  }

  private DataSource wrapDataSource(DataSource dataSource) {
    return wrap(DataSource.class, dataSource);
  }

  @SuppressWarnings("unchecked")
  private <T> T wrap(Class<T> type, T target) {
    return (T)
        Proxy.newProxyInstance(
            TableRendering.class.getClassLoader(), new Class<?>[] {type}, new Handler(target));
  }

  private final class Handler implements InvocationHandler {
    private final Object target;

    Handler(Object target) {
      this.target = target;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      if (name.equals("unwrap") && args.length == 1 && ((Class<?>) args[0]).isInstance(proxy)) {
        return proxy;
      }
      if (name.equals("equals") && args.length == 1) {
        return proxy == args[0];
      }
      if (name.equals("hashCode") && (args == null || args.length == 0)) {
        return System.identityHashCode(proxy);
      }
      if (args != null
          && args.length > 0
          && args[0] instanceof String sql
          && rendersFirstArgument(name)) {
        args = args.clone();
        args[0] = render(sql);
      }
      Object result;
      try {
        result = method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      if (result instanceof Connection c && method.getReturnType() == Connection.class) {
        return wrap(Connection.class, c);
      }
      if (result instanceof Statement s && method.getReturnType() == Statement.class) {
        return wrap(Statement.class, s);
      }
      return result;
    }

    private boolean rendersFirstArgument(String name) {
      if (target instanceof Statement) {
        return STATEMENT_SQL_METHODS.contains(name);
      }
      return target instanceof Connection
          && (name.equals("prepareStatement")
              || name.equals("prepareCall")
              || name.equals("nativeSQL"));
    }
  }
}
