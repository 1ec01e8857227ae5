package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.schema.OutboxSchema;
import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.outbox.testing.TimeSpans;
import dev.outboxrelay.relay.testing.Conditions;
import dev.outboxrelay.relay.testing.PrivatePostgres;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.h2.tools.Server;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment multi-source: one relay process delivers from three databases at once (sources {@code
 * postgresql}, {@code mariadb}, {@code h2}: a private PostgreSQL server of this test, the local
 * MariaDB, an H2 server over TCP) to one idempotent sink. The PostgreSQL server is stopped hard
 * ({@code pg_ctl stop -m immediate}) mid-run for {@link #OUTAGE}, then started again. Expected: the
 * other two sources keep delivering through the outage; readiness names the PostgreSQL source DOWN
 * and the others UP, {@code outbox_source_up} says the same; the relay logs the outage in a few
 * lines, without a stack trace per poll; and afterwards every job of every source has exactly one
 * effect at the sink. Before that, the relay is started while PostgreSQL is down: it starts, with
 * that source DOWN and the others delivering, and starts the source when PostgreSQL comes up.
 * Prints one {@code CHAOS multi-source-<source>} line per source.
 */
@ExtendWith(ChaosReporter.class)
class MultiSourceChaosIT {
  static final Duration OUTAGE = Duration.ofSeconds(10);
  static final String DESTINATION = ChaosExperiment.DESTINATION;
  static final List<String> SOURCES = List.of("postgresql", "mariadb", "h2");

  /** One per source: an Outbox keeps the dialect of the first database it met. */
  private final Map<String, Outbox> outboxes = new java.util.HashMap<>();

  @Test
  void theOtherSourcesDeliverWhilePostgresIsDownAndNothingIsLostOrDuplicated() throws Exception {
    int jobs = ChaosExperiment.scaled(800, 5_000);
    Path work = Path.of("target", "chaos", "multi-source").toAbsolutePath();
    Files.createDirectories(work.resolve("h2"));
    Files.deleteIfExists(work.resolve("relay-multi-source.log"));
    int h2Port = ServiceProcess.freePort();
    Server h2 =
        Server.createTcpServer(
                "-tcp",
                "-tcpPort",
                String.valueOf(h2Port),
                "-ifNotExists",
                "-baseDir",
                work.resolve("h2").toString())
            .start();
    try (PrivatePostgres pg = PrivatePostgres.start();
        ChaosSink sink = new ChaosSink()) {
      String h2Url = "jdbc:h2:tcp://localhost:" + h2Port + "/multi-source-" + System.nanoTime();
      JdbcDataSource h2Ds = new JdbcDataSource();
      h2Ds.setURL(h2Url);
      h2Ds.setUser("sa");
      Map<String, DataSource> db = new LinkedHashMap<>();
      db.put("postgresql", pg.dataSource());
      db.put("mariadb", TestDatabases.mariadb("chaos_multi_source"));
      db.put("h2", h2Ds);
      OutboxSchema.migrate(db.get("postgresql"));
      OutboxSchema.migrate(h2Ds);
      for (DataSource ds : db.values()) {
        TestDatabases.reset(ds);
      }

      Map<String, String> p = new LinkedHashMap<>();
      p.put("quarkus.datasource.postgresql.jdbc.url", pg.jdbcUrl());
      p.put("quarkus.datasource.postgresql.username", "postgres");
      p.put("quarkus.datasource.mariadb.jdbc.url", TestDatabases.mariadbUrl("chaos_multi_source"));
      p.put("quarkus.datasource.mariadb.username", TestDatabases.mariadbUser());
      p.put("quarkus.datasource.mariadb.password", TestDatabases.mariadbPassword());
      p.put("quarkus.datasource.h2.jdbc.url", h2Url);
      p.put("quarkus.datasource.h2.username", "sa");
      for (String s : SOURCES) {
        p.put("outbox.sources." + s + ".datasource", s);
        p.put("quarkus.datasource." + s + ".jdbc.max-size", "16");
        p.put("quarkus.datasource." + s + ".jdbc.acquisition-timeout", "3s");
      }
      p.put("outbox.destinations." + DESTINATION + ".type", "http");
      p.put("outbox.destinations." + DESTINATION + ".url", sink.url("/" + DESTINATION).toString());
      p.put("outbox.relay.concurrency", "8");
      p.put("outbox.relay.batch-size", "16");
      p.put("outbox.relay.lease-duration", "30s");
      p.put("outbox.relay.reap-interval", "1s");
      p.put("outbox.relay.idle-max-wait", "250ms");
      p.put("outbox.relay.metrics-refresh-interval", "250ms");
      p.put("outbox.relay.error-max-wait", "2s");
      p.put("outbox.relay.backoff.initial-delay", "100ms");
      p.put("outbox.relay.backoff.max-delay", "1s");
      p.put("outbox.reconciliation.enabled", "false");
      // Some sink latency keeps deliveries in flight when the database goes.
      sink.behave(d -> ChaosSink.Action.slowOk(5));
      long started = System.nanoTime();
      // PostgreSQL is down when the relay starts: the relay starts anyway, with that source DOWN.
      pg.stopImmediately();
      try (ServiceProcess relay =
          ServiceProcess.launch(
              "relay-multi-source",
              ServiceProcess.moduleJar("relay-service"),
              ServiceProcess.freePort(),
              p,
              work)) {
        relay.awaitListening(Duration.ofSeconds(90));
        int half = jobs / 2;
        enqueue(db.get("mariadb"), "mariadb", 0, half);
        enqueue(db.get("h2"), "h2", 0, half);
        await(
            "readiness: source postgresql DOWN (cannot start), mariadb and h2 UP",
            Duration.ofSeconds(30),
            () -> {
              String body = readiness(relay);
              return entry(body, "source.postgresql", "DOWN: database unreachable")
                  && body.contains("cannot start")
                  && entry(body, "source.mariadb", "UP")
                  && entry(body, "source.h2", "UP");
            },
            relay);
        await(
            "the first halves of MariaDB and H2 sent with PostgreSQL down since start-up",
            Duration.ofSeconds(60),
            () -> sent(db.get("mariadb")) == half && sent(db.get("h2")) == half,
            relay);
        pg.startServer();
        await("the relay ready once PostgreSQL is up", Duration.ofSeconds(30), relay::ready, relay);
        enqueue(db.get("postgresql"), "postgresql", 0, half);
        await(
            "a quarter of the PostgreSQL jobs sent",
            Duration.ofSeconds(60),
            () -> sent(db.get("postgresql")) >= jobs / 4,
            relay);
        String startLog = relay.logText();
        assertTrue(
            startLog.contains("source 'postgresql' (datasource postgresql) DOWN: cannot start:")
                && startLog.contains("source 'postgresql' (datasource postgresql) UP again"),
            "the relay logged that source postgresql could not start, then that it is UP:\n"
                + relay.tail());

        long logOffset = relay.logText().length();
        long outageStart = System.nanoTime();
        pg.stopImmediately();
        // The others' second halves are committed during the outage and must be delivered during
        // it.
        long mariadbAtStop = sent(db.get("mariadb"));
        long h2AtStop = sent(db.get("h2"));
        long othersSentAtStop = mariadbAtStop + h2AtStop;
        enqueue(db.get("mariadb"), "mariadb", half, jobs);
        enqueue(db.get("h2"), "h2", half, jobs);
        String downBody = null;
        double pgUpGauge = -1;
        double othersUpGauge = -1;
        while (System.nanoTime() - outageStart < OUTAGE.toNanos()) {
          HttpResponse<String> ready = relay.get("/q/health/ready");
          String body = ready.body().replaceAll("\\s+", " ");
          if (ready.statusCode() == 503
              && entry(body, "source.postgresql", "DOWN: database unreachable")
              && entry(body, "source.mariadb", "UP")
              && entry(body, "source.h2", "UP")) {
            downBody = body;
            pgUpGauge = relay.metric("outbox_source_up", "source=\"postgresql\"");
            othersUpGauge =
                relay.metric("outbox_source_up", "source=\"mariadb\"")
                    + relay.metric("outbox_source_up", "source=\"h2\"");
          }
          TimeSpans.letPass(
              Duration.ofMillis(
                  200)); // samples readiness through the outage: its length is the fault
        }
        long othersSentInOutage = sent(db.get("mariadb")) + sent(db.get("h2")) - othersSentAtStop;
        long othersAllSentInOutage =
            (sent(db.get("mariadb")) == jobs && sent(db.get("h2")) == jobs) ? 1 : 0;
        assertTrue(
            downBody != null,
            "readiness named source postgresql DOWN and mariadb, h2 UP during the outage;"
                + " last answer: "
                + relay.get("/q/health/ready").body().replaceAll("\\s+", " "));
        assertEquals(0.0, pgUpGauge, "outbox_source_up{source=postgresql} during the outage");
        assertEquals(2.0, othersUpGauge, "outbox_source_up of mariadb and h2 during the outage");
        assertTrue(
            sent(db.get("mariadb")) > mariadbAtStop && sent(db.get("h2")) > h2AtStop,
            "MariaDB and H2 both delivered while PostgreSQL was down");
        if (!ChaosExperiment.large()) {
          // At the mvn verify size the outage outlasts their whole second halves.
          assertEquals(
              1,
              othersAllSentInOutage,
              "MariaDB and H2 delivered every job committed while PostgreSQL"
                  + " was down, during the outage: "
                  + othersSentInOutage
                  + " of "
                  + 2 * (jobs - half)
                  + " sent during it");
        }

        double outageSeconds = (System.nanoTime() - outageStart) / 1e9;
        pg.startServer();
        enqueue(db.get("postgresql"), "postgresql", half, jobs);
        for (String s : SOURCES) {
          DataSource ds = db.get(s);
          await(
              "every " + s + " job settled",
              Duration.ofSeconds(120),
              () ->
                  TestDatabases.queryLong(
                              ds, "SELECT COUNT(*) FROM outbox_message WHERE state IN ('R','W')")
                          == 0
                      && TestDatabases.countMessages(ds) == jobs,
              relay);
        }
        await("readiness UP again", Duration.ofSeconds(30), relay::ready, relay);

        // Quiet failure: the outage in a few lines, no stack trace.
        List<String> outageLines = new ArrayList<>();
        boolean stackTrace = false;
        for (String line : relay.logText().substring((int) logOffset).split("\n")) {
          if (line.contains(" WARN ") || line.contains(" ERROR ") || line.contains("UP again")) {
            outageLines.add(line);
          }
          stackTrace |= line.startsWith("\tat ") || line.startsWith("Caused by:");
        }
        assertTrue(
            !stackTrace, "no stack trace in the relay log during the outage:\n" + relay.tail());
        assertTrue(
            relay.logText().lines().noneMatch(l -> l.startsWith("\tat ")),
            "no stack trace in the relay log, start-up with PostgreSQL down included");
        assertTrue(
            outageLines.size() <= 5,
            outageLines.size() + " lines about the outage:\n" + String.join("\n", outageLines));
        assertTrue(
            outageLines.stream()
                .anyMatch(l -> l.contains("source 'postgresql' (datasource postgresql) DOWN:")),
            "the outage is logged: " + outageLines);
        assertTrue(
            outageLines.stream()
                .anyMatch(l -> l.contains("source 'postgresql' (datasource postgresql) UP again")),
            "the recovery is logged: " + outageLines);

        Map<String, Integer> applications = sink.applications();
        List<String> problems = new ArrayList<>();
        double seconds = (System.nanoTime() - started) / 1e9;
        for (String s : SOURCES) {
          int lost = 0;
          int duplicates = 0;
          for (int i = 0; i < jobs; i++) {
            String op = s + "-" + i;
            int effects = sink.effects(payload(op));
            lost += effects == 0 ? 1 : 0;
            duplicates +=
                Math.max(0, effects - 1) + Math.max(0, applications.getOrDefault(op, 0) - 1);
          }
          long deliveries =
              sink.deliveries().stream().filter(d -> d.key().startsWith(s + "-")).count();
          long redeliveries =
              deliveries
                  - applications.keySet().stream().filter(k -> k.startsWith(s + "-")).count();
          long notSent =
              TestDatabases.queryLong(
                  db.get(s), "SELECT COUNT(*) FROM outbox_message WHERE state NOT IN ('S','C')");
          String line =
              String.format(
                  Locale.ROOT,
                  "CHAOS multi-source-%s jobs=%d lost=%d duplicates=%d"
                      + " redeliveries=%d seconds=%.1f",
                  s,
                  jobs,
                  lost,
                  duplicates,
                  redeliveries,
                  seconds);
          ChaosExperiment.report(line);
          if (lost != 0 || duplicates != 0 || notSent != 0) {
            problems.add(line + " not_sent=" + notSent);
          }
        }
        System.out.printf(
            Locale.ROOT,
            "CHAOS-DETAIL multi-source outage_seconds=%.1f others_sent_during_outage=%d"
                + " others_all_sent_during_outage=%s outage_log_lines=%d%n",
            outageSeconds,
            othersSentInOutage,
            othersAllSentInOutage == 1,
            outageLines.size());
        outageLines.forEach(l -> System.out.println("CHAOS-DETAIL multi-source log: " + l));
        assertTrue(problems.isEmpty(), String.join("\n", problems) + "\n" + relay.tail());
      }
    } finally {
      h2.stop();
    }
  }

  private static String readiness(ServiceProcess relay) {
    try {
      return relay.get("/q/health/ready").body().replaceAll("\\s+", " ");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Whether readiness JSON {@code body} has data entry {@code key} starting with {@code prefix}.
   */
  private static boolean entry(String body, String key, String prefix) {
    return java.util.regex.Pattern.compile(
            "\""
                + java.util.regex.Pattern.quote(key)
                + "\"\\s*:\\s*\""
                + java.util.regex.Pattern.quote(prefix))
        .matcher(body)
        .find();
  }

  private static String payload(String op) {
    return "{\"job\":\"" + op + "\"}";
  }

  /** Jobs {@code <source>-from .. <source>-(to-1)} in transactions of up to 200. */
  private void enqueue(DataSource ds, String source, int from, int to) throws SQLException {
    Outbox outbox =
        outboxes.computeIfAbsent(
            source, k -> new Outbox(OutboxConfig.builder().destinations(DESTINATION).build()));
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      for (int i = from; i < to; i++) {
        String op = source + "-" + i;
        outbox.enqueue(
            c,
            OutboxMessage.builder()
                .operationId(op)
                .destination(DESTINATION)
                .payload(payload(op))
                .build());
        if (i % 200 == 199) {
          c.commit();
        }
      }
      c.commit();
    }
  }

  private static long sent(DataSource ds) {
    return TestDatabases.queryLong(
        ds, "SELECT COUNT(*) FROM outbox_message WHERE state IN ('S','C')");
  }

  private static void await(
      String what, Duration timeout, BooleanSupplier condition, ServiceProcess relay) {
    // PostgreSQL may be restarting: a failing poll is "not yet"
    Conditions.awaitThroughErrors(
        what, timeout, Duration.ofMillis(100), condition, () -> "\n" + relay.tail());
  }
}
