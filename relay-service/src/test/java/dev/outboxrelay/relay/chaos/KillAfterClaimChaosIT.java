package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment 1, kill-after-claim: a relay is SIGKILLed while it holds claimed jobs whose sends have
 * not completed. Nothing is lost: once the leases expire, another relay's reaper returns the jobs
 * (counted in {@code outbox_expired_leases_total}) and that relay delivers them once.
 */
@ExtendWith(ChaosReporter.class)
class KillAfterClaimChaosIT {

  @Test
  void jobsOfAKilledRelayAreRedeliveredAfterTheLease() throws Exception {
    int jobs = ChaosExperiment.scaled(200, 5_000);
    try (ChaosExperiment x = ChaosExperiment.start("kill-after-claim")) {
      // The victim's sends never complete: while it lives, the sink holds every request and then
      // drops it unapplied, so its claims are exactly "claimed, nothing sent".
      CountDownLatch victimDead = new CountDownLatch(1);
      x.sink()
          .behave(
              d -> {
                if (victimDead.getCount() > 0) {
                  victimDead.await();
                  return new ChaosSink.Action.Drop();
                }
                return ChaosSink.Action.ok();
              });
      x.enqueue(jobs);
      ServiceProcess victim = x.startRelay();
      x.awaitCondition(
          "the victim to claim a full set of jobs",
          Duration.ofSeconds(30),
          () -> x.count("state = 'W'") >= 16);
      long claimed = x.count("state = 'W'");
      victim.kill();
      victimDead.countDown();
      assertEquals(
          claimed, x.count("state = 'W'"), "SIGKILL leaves the claims in W: nobody released them");

      ServiceProcess survivor = x.startRelay();
      x.awaitSettled(Duration.ofSeconds(120));
      ChaosExperiment.Verdict v = x.finish();
      assertTrue(
          v.redeliveries() <= claimed, "only the victim's claims can have been delivered twice");

      assertTrue(
          survivor.metric("outbox_expired_leases_total") >= claimed,
          "the survivor's reaper counted the " + claimed + " expired leases");
      assertEquals(
          claimed,
          x.attempts("outcome = 'LEASE_EXPIRED'"),
          "each abandoned claim is recorded once as LEASE_EXPIRED");
      assertEquals(0, v.lost());
    }
  }
}
