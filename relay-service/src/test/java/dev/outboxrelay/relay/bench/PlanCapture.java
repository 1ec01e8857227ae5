package dev.outboxrelay.relay.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;

/**
 * PostgreSQL: the plans of the statements a store really runs. Connections of {@link #dataSource}
 * run each prepared statement first under {@code EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)}, with the
 * same parameters, inside a savepoint that is then rolled back, and only then for real: the caller
 * gets its normal results, and the bench reads the plan of whatever SQL the dialect holds at run
 * time (never a copy of it).
 */
final class PlanCapture {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> EXECUTE =
      Set.of("execute", "executeQuery", "executeUpdate", "executeLargeUpdate");

  /**
   * One statement as it ran: its SQL and the root of its JSON plan (with "Plan" and "Execution
   * Time").
   */
  record Plan(String sql, JsonNode root) {}

  /**
   * What one statement read, summed over its plan's nodes (init plans and sub-plans included);
   * PostgreSQL prints row counts per loop, so each is multiplied by the node's loops.
   *
   * @param indexEntries entries returned or filtered out by index scans (Index, Index Only, Bitmap
   *     Index)
   * @param removedByFilter rows read and then dropped by a node's filter (index and heap scans)
   * @param seqScanRows rows read by sequential scans
   * @param sharedBuffers shared buffers hit plus read by the whole statement
   */
  record Reads(
      long indexEntries,
      long removedByFilter,
      long seqScanRows,
      long sharedBuffers,
      long rows,
      double executionMs) {}

  private final DataSource target;
  private final List<Plan> plans = new CopyOnWriteArrayList<>();

  PlanCapture(DataSource target) {
    this.target = target;
  }

  /** Connections that explain each statement before running it. */
  DataSource dataSource() {
    return (DataSource)
        Proxy.newProxyInstance(
            PlanCapture.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, method, args) -> {
              Object result = invoke(target, method, args);
              return result instanceof Connection c ? connection(c) : result;
            });
  }

  List<Plan> plans() {
    return List.copyOf(plans);
  }

  /** The sums of one plan. */
  static Reads reads(Plan plan) {
    long[] sums = new long[3];
    JsonNode top = plan.root().path("Plan");
    walk(top, sums);
    long buffers = top.path("Shared Hit Blocks").asLong() + top.path("Shared Read Blocks").asLong();
    return new Reads(
        sums[0],
        sums[1],
        sums[2],
        buffers,
        top.path("Actual Rows").asLong(),
        plan.root().path("Execution Time").asDouble());
  }

  private static void walk(JsonNode node, long[] sums) {
    String type = node.path("Node Type").asText();
    double loops = node.path("Actual Loops").asDouble();
    long removed =
        Math.round(
            (node.path("Rows Removed by Filter").asDouble()
                    + node.path("Rows Removed by Index Recheck").asDouble())
                * loops);
    long rows = Math.round(node.path("Actual Rows").asDouble() * loops);
    if (type.equals("Index Scan")
        || type.equals("Index Only Scan")
        || type.equals("Bitmap Index Scan")) {
      sums[0] += rows + removed;
    } else if (type.equals("Seq Scan")) {
      sums[2] += rows + removed;
    }
    sums[1] += removed;
    for (JsonNode child : node.path("Plans")) {
      walk(child, sums);
    }
  }

  private Connection connection(Connection real) {
    return (Connection)
        Proxy.newProxyInstance(
            PlanCapture.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object result = invoke(real, method, args);
              if (method.getName().equals("prepareStatement")
                  && result instanceof PreparedStatement ps) {
                return statement(real, (String) args[0], ps);
              }
              return result;
            });
  }

  /** Forwards every call; remembers the parameter setters and explains before each execution. */
  private PreparedStatement statement(Connection real, String sql, PreparedStatement ps) {
    List<Object[]> setters = new ArrayList<>();
    InvocationHandler h =
        (proxy, method, args) -> {
          if (method.getName().startsWith("set")
              && args != null
              && args.length >= 2
              && args[0] instanceof Integer) {
            setters.add(new Object[] {method, args});
          } else if (method.getName().equals("clearParameters")) {
            setters.clear();
          } else if (EXECUTE.contains(method.getName()) && (args == null || args.length == 0)) {
            explain(real, sql, setters);
          }
          return invoke(ps, method, args);
        };
    return (PreparedStatement)
        Proxy.newProxyInstance(
            PlanCapture.class.getClassLoader(), new Class<?>[] {PreparedStatement.class}, h);
  }

  private void explain(Connection real, String sql, List<Object[]> setters) throws Throwable {
    boolean autoCommit = real.getAutoCommit();
    if (autoCommit) {
      real.setAutoCommit(false);
    }
    Savepoint before = autoCommit ? null : real.setSavepoint();
    try (PreparedStatement explain =
        real.prepareStatement("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql)) {
      for (Object[] setter : setters) {
        invoke(explain, (Method) setter[0], (Object[]) setter[1]);
      }
      try (ResultSet rs = explain.executeQuery()) {
        rs.next();
        plans.add(new Plan(sql, JSON.readTree(rs.getString(1)).get(0)));
      }
    } finally {
      if (autoCommit) {
        real.rollback();
        real.setAutoCommit(true);
      } else {
        real.rollback(before);
      }
    }
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
