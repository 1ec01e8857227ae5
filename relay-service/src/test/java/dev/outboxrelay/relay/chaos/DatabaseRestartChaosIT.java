package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment 5, database-restart: PostgreSQL is restarted ({@code pg_ctlcluster ... restart}) while
 * two relays deliver. Every pooled connection breaks; claims, heartbeats and recordings fail for a
 * few seconds. The relays back off, reconnect and finish; results that could not be recorded are
 * re-offered after their lease and absorbed by the idempotent sink.
 *
 * <p>The restart command is {@code pg_ctlcluster --skip-systemctl-redirect <version> main restart}
 * for the only cluster under /etc/postgresql; {@code -Dchaos.pg.restart="..."} replaces it (for
 * another PostgreSQL installation).
 */
@ExtendWith(ChaosReporter.class)
class DatabaseRestartChaosIT {

  @Test
  void relaysReconnectAfterAPostgresRestartAndFinish() throws Exception {
    int jobs = ChaosExperiment.scaled(5_000, 30_000);
    try (ChaosExperiment x = ChaosExperiment.start("database-restart")) {
      // Some sink latency keeps the relays busy with sends in flight when the database goes.
      x.sink().behave(d -> ChaosSink.Action.slowOk(20));
      ServiceProcess a = x.startRelay();
      ServiceProcess b = x.startRelay();
      x.enqueue(jobs);
      x.awaitCondition(
          "a fifth of the jobs to be sent",
          Duration.ofSeconds(120),
          () -> x.count("state = 'S'") >= jobs / 5);
      long sentBefore = x.count("state = 'S'");

      long t0 = System.nanoTime();
      restartPostgres();
      double restartSeconds = (System.nanoTime() - t0) / 1e9;

      x.awaitSettled(Duration.ofMinutes(5));
      ChaosExperiment.Verdict v = x.finish();
      for (ServiceProcess relay : List.of(a, b)) {
        assertTrue(relay.alive(), relay.name() + " survived the restart");
        // Its claim loop may still be in an error pause (error-max-wait) when the other relay
        // drained
        // the rest: wait for its next claim to succeed and its readiness to come back.
        x.awaitCondition(relay.name() + " ready again", Duration.ofSeconds(30), relay::ready);
        // Database errors (claims, recordings, heartbeats, reaper) are logged once per state change
        // of the source, not per poll: every "DOWN:" line is paired with an "UP again" line (0
        // pairs
        // when the relay never ran into the restart; a pair or two, not hundreds, when it did).
        String log = relay.logText();
        long failed = count(log, "source 'default' (datasource postgresql) DOWN:");
        assertEquals(
            failed,
            count(log, "source 'default' (datasource postgresql) UP again"),
            relay.name() + " logs each database outage and its recovery once:\n" + relay.tail());
        assertTrue(
            failed <= 3, relay.name() + " logged " + failed + " database outages for one restart");
      }
      assertTrue(sentBefore < jobs, "the restart happened under load");
      System.out.printf(
          "CHAOS-DETAIL database-restart sent_before_restart=%d restart_seconds=%.1f"
              + " redeliveries=%d%n",
          sentBefore, restartSeconds, v.redeliveries());
    }
  }

  private static long count(String text, String needle) {
    return text.lines().filter(l -> l.contains(needle)).count();
  }

  static void restartPostgres() throws Exception {
    String override = System.getProperty("chaos.pg.restart");
    List<String> cmd;
    if (override != null && !override.isBlank()) {
      cmd = List.of("sh", "-c", override);
    } else {
      String[] versions = new File("/etc/postgresql").list();
      if (versions == null || versions.length != 1) {
        throw new IllegalStateException(
            "expected one PostgreSQL cluster under /etc/postgresql, found "
                + (versions == null ? "none" : List.of(versions))
                + "; set -Dchaos.pg.restart=<command>");
      }
      cmd = List.of("pg_ctlcluster", "--skip-systemctl-redirect", versions[0], "main", "restart");
    }
    Path out = Files.createTempFile("pg-restart", ".log");
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(cmd + " failed: " + Files.readString(out));
    }
  }
}
