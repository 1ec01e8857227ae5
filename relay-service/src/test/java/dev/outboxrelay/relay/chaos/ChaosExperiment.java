package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.relay.claim.Backoff;
import dev.outboxrelay.relay.testing.Conditions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/**
 * One fault experiment: its own PostgreSQL schema ({@code chaos_<name>}; or MariaDB or SQL Server
 * database of that name, see {@link ChaosDatabase}), an idempotent {@link ChaosSink}, relay
 * processes started from the packaged jar, and the verdict that every experiment ends with: every
 * job {@code S} (or {@code D} where intended), {@code lost = 0}, {@code duplicates = 0}, printed as
 * {@code CHAOS <name> jobs=N lost=0 duplicates=0 redeliveries=K seconds=T} and appended to {@code
 * target/chaos/results.txt}.
 *
 * <p>Sizes come from {@link #scaled}: small in {@code mvn verify}, large under {@code
 * -Dchaos.scale=large} ({@code bin/chaos}).
 */
public final class ChaosExperiment implements AutoCloseable {
  public static final String DESTINATION = "chaos";
  static final Path RESULTS = Path.of("target", "chaos", "results.txt");
  private static volatile String current;

  private final String name;
  private final ChaosDatabase database;
  private final DataSource ds;
  private final ChaosSink sink = new ChaosSink();
  private final Path logDir;
  private final List<ServiceProcess> relays = new ArrayList<>();
  private final Outbox outbox =
      new Outbox(OutboxConfig.builder().destinations(DESTINATION).build());
  private final long startedNanos = System.nanoTime();
  private int relayCount;
  private int enqueued;
  private volatile long lastCommitNanos;

  /** Figures of this experiment for its CHAOS line, after the common ones. */
  private final Map<String, Object> figures = new LinkedHashMap<>();

  private ChaosExperiment(String name, ChaosDatabase database) throws IOException {
    this.name = name;
    this.database = database;
    this.ds = database.dataSource(schema());
    TestDatabases.reset(ds);
    this.logDir = Path.of("target", "chaos", name).toAbsolutePath();
    Files.createDirectories(logDir);
    try (var files = Files.list(logDir)) {
      for (Path p : (Iterable<Path>) files::iterator) {
        Files.delete(p);
      }
    }
  }

  /** Starts experiment {@code name} (lower case, dashes) on an empty outbox. */
  public static ChaosExperiment start(String name) throws IOException {
    return start(name, ChaosDatabase.POSTGRESQL);
  }

  /**
   * Starts experiment {@code name} on {@code database}; it reports as {@link
   * ChaosDatabase#experimentName}, e.g. {@code many-relays-mariadb}.
   */
  public static ChaosExperiment start(String name, ChaosDatabase database) throws IOException {
    String named = database.experimentName(name);
    current = named;
    return new ChaosExperiment(named, database);
  }

  private String schema() {
    return "chaos_" + name.replace('-', '_');
  }

  public ChaosDatabase database() {
    return database;
  }

  /** The experiment running now, for {@link ChaosReporter}. */
  static String current() {
    return current;
  }

  /** {@code small} in mvn verify, {@code large} under {@code -Dchaos.scale=large}. */
  public static int scaled(int small, int large) {
    return large() ? large : small;
  }

  public static boolean large() {
    return "large".equalsIgnoreCase(System.getProperty("chaos.scale", "small"));
  }

  public String name() {
    return name;
  }

  public DataSource dataSource() {
    return ds;
  }

  public ChaosSink sink() {
    return sink;
  }

  /**
   * Enqueues {@code n} jobs to {@link #DESTINATION} in transactions of up to 1,000; returns ids.
   */
  public List<Long> enqueue(int n) throws SQLException {
    return enqueue(n, i -> OutboxMessage.builder());
  }

  /**
   * Enqueues {@code n} jobs, each built from {@code template}; operation id and payload are set
   * here.
   */
  public List<Long> enqueue(int n, java.util.function.IntFunction<OutboxMessage.Builder> template)
      throws SQLException {
    List<Long> ids = new ArrayList<>(n);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      for (int i = 0; i < n; i++) {
        int seq = enqueued++;
        String op = name + "-" + seq;
        ids.add(
            outbox
                .enqueue(
                    c,
                    template
                        .apply(seq)
                        .operationId(op)
                        .destination(DESTINATION)
                        .payload("{\"job\":\"" + op + "\"}")
                        .build())
                .messageId());
        if (i % 1000 == 999) {
          c.commit();
        }
      }
      lastCommitNanos = System.nanoTime();
      c.commit();
      // Fresh statistics, as autovacuum keeps them on a live table: right after the reset and a
      // bulk load the planner would see a near-empty table and sort the whole ready backlog on
      // every claim (a plan question for the benchmarks, not a fault to inject here).
      database.refreshStatistics(c);
      c.commit();
    }
    return ids;
  }

  /**
   * {@link System#nanoTime()} taken just before the last {@link #enqueue} committed: its jobs
   * became visible no earlier, so a latency measured from here is never understated.
   */
  public long lastCommitNanos() {
    return lastCommitNanos;
  }

  /**
   * Relay settings for the experiments: short lease (2s) and reaper interval so faults resolve in
   * seconds; every key can be overridden per relay.
   */
  public Map<String, String> relayProperties() {
    Map<String, String> p = new LinkedHashMap<>(database.relayConnection(schema()));
    String pool = "quarkus.datasource." + database.datasource() + ".jdbc.";
    p.put(pool + "max-size", "20");
    // The pool starts full: a relay fresh from start-up otherwise opens its connections one by one
    // while its first batch records, and on a loaded 2-core machine that wait alone can outlast
    // the experiments' 2s lease (production leases are 30s).
    p.put(pool + "initial-size", "20");
    p.put(pool + "min-size", "20");
    p.put(pool + "acquisition-timeout", "5s");
    p.put("outbox.destinations." + DESTINATION + ".type", "http");
    p.put("outbox.destinations." + DESTINATION + ".url", sink.url("/" + DESTINATION).toString());
    p.put("outbox.destinations." + DESTINATION + ".connect-timeout", "1s");
    p.put("outbox.destinations." + DESTINATION + ".request-timeout", "30s");
    p.put("outbox.relay.concurrency", "16");
    p.put("outbox.relay.batch-size", "16");
    p.put("outbox.relay.lease-duration", "2s");
    p.put("outbox.relay.reap-interval", "250ms");
    p.put("outbox.relay.max-attempts", "10");
    p.put("outbox.relay.backoff.initial-delay", "100ms");
    p.put("outbox.relay.backoff.max-delay", "1s");
    p.put("outbox.relay.idle-max-wait", "250ms");
    p.put("outbox.relay.shutdown-grace", "5s");
    p.put("outbox.relay.metrics-refresh-interval", "250ms");
    p.put("outbox.relay.ready-max-backlog-age", "10m");
    return p;
  }

  /**
   * Starts a relay process with the experiment's settings plus {@code overrides}; waits until
   * ready.
   */
  public ServiceProcess startRelay(Map<String, String> overrides)
      throws IOException, InterruptedException {
    ServiceProcess relay = launchRelay(overrides);
    relay.awaitReady(Duration.ofSeconds(90));
    return relay;
  }

  /** Starts a relay process without waiting for it. */
  public ServiceProcess launchRelay(Map<String, String> overrides) throws IOException {
    Map<String, String> p = relayProperties();
    p.putAll(overrides);
    ServiceProcess relay =
        ServiceProcess.launch(
            "relay-" + (++relayCount),
            ServiceProcess.moduleJar("relay-service"),
            ServiceProcess.freePort(),
            p,
            logDir);
    relays.add(relay);
    return relay;
  }

  public ServiceProcess startRelay() throws IOException, InterruptedException {
    return startRelay(Map.of());
  }

  /** Waits until no job is ready or leased (everything reached S, C or D). */
  public void awaitSettled(Duration timeout) throws InterruptedException {
    awaitCondition(
        "every job settled (no R or W)", timeout, () -> count("state IN ('R','W')") == 0);
  }

  /** Polls {@code condition} every 50ms; fails with the state counts and relay logs on timeout. */
  public void awaitCondition(String what, Duration timeout, BooleanSupplier condition)
      throws InterruptedException {
    // the database may be restarting: a failing poll is "not yet"
    Conditions.awaitThroughErrors(
        what,
        timeout,
        Duration.ofMillis(50),
        condition,
        () ->
            "jobs by state "
                + countByState()
                + "; sink applied "
                + sink.appliedCount()
                + "\n"
                + relayTails());
  }

  public String relayTails() {
    StringBuilder b = new StringBuilder();
    for (ServiceProcess r : relays) {
      b.append("--- ")
          .append(r.name())
          .append(r.alive() ? " (running)" : " (exited)")
          .append('\n')
          .append(r.tail())
          .append('\n');
    }
    return b.toString();
  }

  public long count(String where, Object... params) {
    return TestDatabases.queryLong(
        ds, "SELECT COUNT(*) FROM outbox_message WHERE " + where, params);
  }

  public long attempts(String where, Object... params) {
    return TestDatabases.queryLong(
        ds, "SELECT COUNT(*) FROM outbox_attempt WHERE " + where, params);
  }

  /**
   * The rows of {@code sql}, each rendered as its columns joined by {@code |} (nulls as {@code
   * null}): for snapshots to compare before and after a fault.
   */
  public List<String> rows(String sql, Object... params) {
    List<String> rows = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        int columns = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          StringBuilder b = new StringBuilder();
          for (int i = 1; i <= columns; i++) {
            b.append(i > 1 ? "|" : "").append(rs.getString(i));
          }
          rows.add(b.toString());
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return rows;
  }

  /**
   * {@link ServiceProcess#metric} without checked exceptions, for {@link #awaitCondition} lambdas:
   * the sum of the samples of {@code metric} at the relay's /q/metrics matching {@code labels}.
   */
  public static double metric(ServiceProcess relay, String metric, String... labels) {
    try {
      return relay.metric(metric, labels);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("scraping " + metric + " from " + relay.name(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while scraping " + relay.name(), e);
    }
  }

  public Map<String, Long> countByState() {
    Map<String, Long> m = new TreeMap<>();
    try (Connection c = ds.getConnection();
        ResultSet rs =
            c.createStatement()
                .executeQuery("SELECT state, COUNT(*) FROM outbox_message GROUP BY state")) {
      while (rs.next()) {
        m.put(rs.getString(1), rs.getLong(2));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return m;
  }

  /**
   * Adds {@code name=value} to this experiment's CHAOS line (after {@code seconds}), e.g. {@code
   * stale=17}.
   */
  public void figure(String name, Object value) {
    figures.put(name, value);
  }

  /** The verdict of a finished experiment; {@code figures}: the experiment's own, in order. */
  public record Verdict(
      String name,
      int jobs,
      int lost,
      int duplicates,
      long redeliveries,
      double seconds,
      List<String> problems,
      Map<String, Object> figures) {
    public String line() {
      StringBuilder b =
          new StringBuilder(
              String.format(
                  java.util.Locale.ROOT,
                  "CHAOS %s jobs=%d lost=%d duplicates=%d redeliveries=%d seconds=%.1f",
                  name,
                  jobs,
                  lost,
                  duplicates,
                  redeliveries,
                  seconds));
      figures.forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
      return b.toString();
    }
  }

  /**
   * Checks the end state against the sink, prints the CHAOS line and fails the test unless lost =
   * 0, duplicates = 0 and every job is where it should be. {@code expectDead}: ids that must end
   * {@code D} with a diagnosis, an attempt history and no effect at the sink; every other job must
   * be {@code S} (or {@code C}) with exactly one effect.
   */
  public Verdict finish(Set<Long> expectDead) throws IOException {
    double seconds = (System.nanoTime() - startedNanos) / 1e9;
    int jobs = 0;
    int lost = 0;
    List<String> problems = new ArrayList<>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT m.id, m.operation_id, m.payload, m.state,"
                    + " m.last_error, (SELECT COUNT(*) FROM outbox_attempt a WHERE a.message_id = m.id)"
                    + " FROM outbox_message m ORDER BY m.id");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        jobs++;
        long id = rs.getLong(1);
        String op = rs.getString(2);
        String payload = rs.getString(3);
        String state = rs.getString(4);
        String lastError = rs.getString(5);
        long attemptRows = rs.getLong(6);
        int effects = sink.effects(payload);
        if (expectDead.contains(id)) {
          if (!state.equals("D") || lastError == null || attemptRows == 0 || effects != 0) {
            problems.add(
                op
                    + " should be D with a diagnosis and no effect: state="
                    + state
                    + " last_error="
                    + lastError
                    + " attempts="
                    + attemptRows
                    + " effects="
                    + effects);
          }
        } else if (!(state.equals("S") || state.equals("C")) || effects == 0) {
          lost++;
          if (problems.size() < 20) {
            problems.add(
                op + " lost: state=" + state + " effects=" + effects + " last_error=" + lastError);
          }
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    Verdict v =
        new Verdict(
            name,
            jobs,
            lost,
            sink.duplicateEffects(),
            sink.redeliveries(),
            seconds,
            problems,
            Collections.unmodifiableMap(new LinkedHashMap<>(figures)));
    report(v.line());
    if (!problems.isEmpty() || v.duplicates() != 0) {
      fail(v.line() + "\n" + String.join("\n", problems) + "\n" + relayTails());
    }
    assertEquals(enqueued, jobs, "every enqueued job is in the table");
    return v;
  }

  public Verdict finish() throws IOException {
    return finish(Set.of());
  }

  /** Prints a line and appends it to {@link #RESULTS}. */
  static synchronized void report(String line) throws IOException {
    System.out.println(line);
    Files.createDirectories(RESULTS.getParent());
    Files.writeString(RESULTS, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  /** One row of {@code outbox_attempt}; times are the database clock's. */
  public record Attempt(
      long messageId,
      int attemptNo,
      java.time.Instant startedAt,
      java.time.Instant finishedAt,
      String outcome,
      String errorClass,
      String errorMessage) {}

  /** Every recorded attempt, by message id, each list in attempt order. */
  public Map<Long, List<Attempt>> attemptHistory() {
    Map<Long, List<Attempt>> byMessage = new TreeMap<>();
    try (Connection c = ds.getConnection();
        ResultSet rs =
            c.createStatement()
                .executeQuery(
                    "SELECT message_id, attempt_no, started_at,"
                        + " finished_at, outcome, error_class, error_message FROM outbox_attempt"
                        + " ORDER BY message_id, attempt_no, id")) {
      while (rs.next()) {
        Attempt a =
            new Attempt(
                rs.getLong(1),
                rs.getInt(2),
                rs.getObject(3, java.time.OffsetDateTime.class).toInstant(),
                rs.getObject(4, java.time.OffsetDateTime.class).toInstant(),
                rs.getString(5),
                rs.getString(6),
                rs.getString(7));
        byMessage.computeIfAbsent(a.messageId(), k -> new ArrayList<>()).add(a);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return byMessage;
  }

  /** The backoff schedule a relay with these settings uses (jitter pinned to its middle). */
  public static Backoff backoff(Map<String, String> config) {
    return new Backoff(
        duration(config.get("outbox.relay.backoff.initial-delay")),
        Double.parseDouble(config.get("outbox.relay.backoff.multiplier")),
        duration(config.get("outbox.relay.backoff.max-delay")),
        Double.parseDouble(config.get("outbox.relay.backoff.jitter")),
        () -> 0.5);
  }

  /**
   * A relay duration setting as written in the properties ({@code 250ms}, {@code 2s}, {@code 1m},
   * ISO).
   */
  public static Duration duration(String value) {
    String v = value.trim();
    if (v.startsWith("P") || v.startsWith("p")) {
      return Duration.parse(v);
    }
    if (v.matches("\\d+")) {
      return Duration.ofSeconds(Long.parseLong(v));
    }
    if (v.endsWith("ms")) {
      return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
    }
    long n = Long.parseLong(v.substring(0, v.length() - 1));
    return switch (v.charAt(v.length() - 1)) {
      case 's' -> Duration.ofSeconds(n);
      case 'm' -> Duration.ofMinutes(n);
      case 'h' -> Duration.ofHours(n);
      default -> throw new IllegalArgumentException("not a duration: " + value);
    };
  }

  /** Every relay process started by this experiment. */
  public List<ServiceProcess> relays() {
    return List.copyOf(relays);
  }

  @Override
  public void close() throws Exception {
    ServiceProcess.closeAll(relays);
    sink.close();
  }
}
