package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TimeSpans;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment idle: with nothing to deliver, a relay costs the database a bounded number of claim
 * statements per second, and a job committed into that silence is still picked up promptly.
 *
 * <p>After an empty claim the loop sleeps at least its idle wait, which doubles from {@code
 * idle-min-wait} up to {@code idle-max-wait}. Once it has reached the cap (warm-up: a few
 * idle-max-wait periods) at most {@code window / idle-max-wait + 1} claim statements fit into a
 * window ({@code outbox_claim_statements_total}); the test allows 5% and 2 statements more. The
 * other side of the trade: a job committed while the loop sleeps waits at most one idle-max-wait
 * for the next claim, so it reaches the sink within idle-max-wait plus a margin for claim, send and
 * a busy 2-core machine. A non-default idle-max-wait (500ms) makes both bounds visibly derived from
 * the configuration.
 */
@ExtendWith(ChaosReporter.class)
class IdleChaosIT {
  /** Claim, send and scheduling on a loaded 2-core machine, on top of the idle wait. */
  private static final Duration PICKUP_MARGIN = Duration.ofMillis(1_500);

  @Test
  void anIdleRelayPollsAtItsConfiguredRateAndStillPicksUpPromptly() throws Exception {
    Duration window = Duration.ofSeconds(ChaosExperiment.scaled(5, 30));
    int pickups = ChaosExperiment.scaled(1, 5);
    try (ChaosExperiment x = ChaosExperiment.start("idle")) {
      Map<String, String> overrides = Map.of("outbox.relay.idle-max-wait", "500ms");
      Map<String, String> config = x.relayProperties();
      config.putAll(overrides);
      Duration idleMax = ChaosExperiment.duration(config.get("outbox.relay.idle-max-wait"));
      Duration idleMin =
          ChaosExperiment.duration(config.getOrDefault("outbox.relay.idle-min-wait", "10ms"));
      ServiceProcess relay = x.startRelay(overrides);

      // Warm-up: the doublings from idle-min-wait to idle-max-wait take less than one idle-max-wait
      // in sum (10+20+...+320ms < 500ms here); three periods also absorb a slow start.
      TimeSpans.letPass(idleMax.multipliedBy(3));
      long t0 = System.nanoTime();
      double before = relay.metric("outbox_claim_statements_total");
      TimeSpans.letPass(window); // the measured idle window
      double after = relay.metric("outbox_claim_statements_total");
      long t1 = System.nanoTime();
      Duration measured =
          Duration.ofNanos(t1 - t0); // encloses both scrapes: at least the real window
      double statements = after - before;
      double bound = measured.toMillis() / (double) idleMax.toMillis() * 1.05 + 2;
      double rate = statements / (measured.toMillis() / 1000.0);
      assertTrue(
          statements <= bound,
          String.format(
              java.util.Locale.ROOT,
              "an idle relay ran %.0f claim statements in %dms (%.2f/s); with idle-max-wait=%s at most"
                  + " %.1f (window / idle-max-wait x 1.05 + 2, i.e. %.2f/s)",
              statements,
              measured.toMillis(),
              rate,
              idleMax,
              bound,
              bound / (measured.toMillis() / 1000.0)));
      assertTrue(
          statements >= 1,
          "the idle relay still polls (idle-min-wait="
              + idleMin
              + ", idle-max-wait="
              + idleMax
              + "): "
              + statements
              + " claim statements in "
              + measured.toMillis()
              + "ms");
      assertEquals(0, x.count("1 = 1"), "nothing was enqueued during the idle window");

      // A job committed into the silence is claimed within one idle wait.
      Duration pickupBound = idleMax.plus(PICKUP_MARGIN);
      long slowest = 0;
      for (int i = 0; i < pickups; i++) {
        if (i > 0) {
          TimeSpans.letPass(idleMax.multipliedBy(3)); // idle again, at the cap
        }
        int seen = x.sink().deliveries().size();
        List<Long> id = x.enqueue(1);
        long beforeCommit =
            x.lastCommitNanos(); // just before the commit: latency never understated
        x.awaitCondition(
            "the sink to receive job " + id.get(0),
            Duration.ofSeconds(30),
            () -> x.sink().deliveries().size() > seen);
        ChaosSink.Delivery d = x.sink().deliveries().get(seen);
        assertEquals((long) id.get(0), d.messageId());
        long latencyMillis = (d.receivedNanos() - beforeCommit) / 1_000_000;
        slowest = Math.max(slowest, latencyMillis);
        assertTrue(
            latencyMillis <= pickupBound.toMillis(),
            "job "
                + id.get(0)
                + " committed into an idle"
                + " relay reached the sink after "
                + latencyMillis
                + "ms; idle-max-wait="
                + idleMax
                + " bounds the wait for the next claim, allowed "
                + pickupBound.toMillis()
                + "ms (idle-max-wait + "
                + PICKUP_MARGIN.toMillis()
                + "ms margin)");
      }
      x.awaitSettled(Duration.ofSeconds(30));
      x.finish();
      System.out.printf(
          java.util.Locale.ROOT,
          "idle: %.0f claim statements in %dms (%.2f/s, bound %.1f);"
              + " slowest pickup %dms (bound %dms)%n",
          statements,
          measured.toMillis(),
          rate,
          bound,
          slowest,
          pickupBound.toMillis());
    }
  }
}
