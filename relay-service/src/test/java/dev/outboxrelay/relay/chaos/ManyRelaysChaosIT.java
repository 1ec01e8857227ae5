package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TimeSpans;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Experiment 10, many-relays: three relay processes share one outbox while, every few seconds, a
 * random one of those that are up and working is SIGKILLed and replaced by a new process. Claims of
 * the dead are reaped after the lease by the living; nothing is lost and nothing takes effect
 * twice.
 *
 * <p>Runs on each outbox database ({@link ChaosDatabase}): PostgreSQL as {@code many-relays},
 * MariaDB as {@code many-relays-mariadb}, SQL Server as {@code many-relays-sqlserver} where one is
 * reachable (elsewhere that run is reported as skipped with the reason).
 */
@ExtendWith(ChaosReporter.class)
class ManyRelaysChaosIT {
  static final int RELAYS = 3;
  static final Duration KILL_EVERY = Duration.ofSeconds(5);

  @ParameterizedTest(name = "{0}")
  @EnumSource(ChaosDatabase.class)
  void randomKillsAmongThreeRelaysLoseAndDuplicateNothing(ChaosDatabase database) throws Exception {
    assumeTrue(
        database.unavailable().isEmpty(),
        () -> database + " skipped: " + database.unavailable().get());
    int jobs = ChaosExperiment.scaled(10_000, 50_000);
    long seed = Long.getLong("chaos.seed", System.nanoTime());
    Random random = new Random(seed);
    try (ChaosExperiment x = ChaosExperiment.start("many-relays", database)) {
      x.enqueue(jobs);
      List<ServiceProcess> live = new ArrayList<>();
      for (int i = 0; i < RELAYS; i++) {
        live.add(x.launchRelay(Map.of()));
      }
      int kills = 0;
      long deadline =
          System.nanoTime() + Duration.ofMinutes(ChaosExperiment.scaled(5, 15)).toNanos();
      // Kill while there is work left (at least twice), then let the survivors drain.
      while ((x.count("state IN ('R','W')") > 0 || kills < 2) && System.nanoTime() < deadline) {
        TimeSpans.letPass(KILL_EVERY); // the fault's schedule: a kill every KILL_EVERY
        List<Integer> working = new ArrayList<>();
        for (int i = 0; i < live.size(); i++) {
          if (live.get(i).ready()) {
            working.add(i);
          }
        }
        if (working.isEmpty()) {
          continue; // every relay is still starting: killing one now would test nothing
        }
        int victim = working.get(random.nextInt(working.size()));
        live.get(victim).kill();
        kills++;
        live.set(victim, x.launchRelay(Map.of()));
      }
      for (ServiceProcess r : live) {
        r.awaitReady(Duration.ofSeconds(90));
      }
      x.awaitSettled(Duration.ofMinutes(3));
      ChaosExperiment.Verdict v = x.finish();
      long expired = x.attempts("outcome = 'LEASE_EXPIRED'");
      System.out.printf(
          "CHAOS-DETAIL %s kills=%d seed=%d lease_expired_attempts=%d%n",
          x.name(), kills, seed, expired);
      assertTrue(kills >= 2, "the experiment killed relays while they worked");
      assertTrue(v.jobs() == jobs, "all jobs accounted for");
    }
  }
}
