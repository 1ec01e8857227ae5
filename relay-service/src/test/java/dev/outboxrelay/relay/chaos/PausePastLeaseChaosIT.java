package dev.outboxrelay.relay.chaos;

import static dev.outboxrelay.relay.chaos.ChaosExperiment.metric;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment pause-past-lease: a relay is frozen (SIGSTOP, like a long GC pause or a suspended VM)
 * in the middle of its sends for longer than its lease. Another relay's reaper re-offers the jobs
 * and that relay delivers them. When the frozen relay wakes up (SIGCONT) it still believes it owns
 * them: its heartbeats, and then the late results of its old sends (some 200, some 503), all run as
 * token-checked updates that change no row. They are counted in {@code
 * outbox_stale_completions_total{update="renew|delivered|retry"}}, recorded only as {@code STALE}
 * attempts, and change nothing: every job stays {@code S} with the new owner's attempt history, and
 * the sink absorbs the late repeats by idempotency key.
 *
 * <p>Choreography: relay A claims exactly the {@code held} first jobs and the sink holds each of
 * A's sends (attempt 1 of those jobs) until the end. Once A holds all of them, A is paused,
 * background jobs are added and relay B starts: B's reaper returns A's expired leases, B delivers
 * everything (the sink answers B at once). Then A resumes with its sends still held, so only its
 * heartbeats run and find the leases lost; then the sink releases A's sends, answering even ones
 * 200 and odd ones 503.
 */
@ExtendWith(ChaosReporter.class)
class PausePastLeaseChaosIT {
  @Test
  void lateResultsOfAPausedOwnerAreStaleAndChangeNothing() throws Exception {
    int held = ChaosExperiment.scaled(16, 24);
    int background = ChaosExperiment.scaled(100, 3_000);
    try (ChaosExperiment x = ChaosExperiment.start("pause-past-lease")) {
      List<Long> heldIds = x.enqueue(held);
      Map<Long, Integer> lateStatus = new HashMap<>();
      for (int i = 0; i < heldIds.size(); i++) {
        lateStatus.put(heldIds.get(i), i % 2 == 0 ? 200 : 503);
      }
      long late200 = lateStatus.values().stream().filter(s -> s == 200).count();
      long late503 = held - late200;

      // A is the only relay while these jobs are fresh, so attempt 1 of a held job is A's send.
      // B only ever sees them as attempt 2 (after the reaper counted A's expired attempt).
      FirstSends sendsOfA = new FirstSends(lateStatus, lateStatus.keySet());
      x.sink().behave(sendsOfA);

      ServiceProcess a = x.startRelay(FrozenOwner.settings(held));
      x.awaitCondition(
          "A to have every held job's send in flight at the sink",
          Duration.ofSeconds(60),
          () -> sendsOfA.arrived() == held);
      FrozenOwner owner = FrozenOwner.holding(x, a, heldIds);

      a.pause();
      ServiceProcess b = owner.takenOverBy(background);

      // Wake A with its sends still held: only its heartbeats run, and every one finds its lease
      // gone (at most one lost renewal per job: the heartbeat stops after it).
      a.resume();
      x.awaitCondition(
          "A's heartbeats to find all " + held + " leases lost",
          Duration.ofSeconds(60),
          () -> owner.stale("renew") >= held);
      assertEquals(
          0,
          owner.stale("delivered") + owner.stale("retry"),
          "no send of A has completed yet: they are still held at the sink");

      sendsOfA.release();
      x.awaitCondition(
          "A to record the late results of its " + held + " sends",
          Duration.ofSeconds(60),
          () -> x.attempts("outcome = 'STALE'") == held);
      x.awaitCondition(
          "A's stale counters to count them",
          Duration.ofSeconds(30),
          () -> owner.stale("delivered") + owner.stale("retry") >= held);
      assertEquals(held, owner.stale("renew"), "one lost renewal per held job");
      assertEquals(
          late200,
          owner.stale("delivered"),
          "every late 200 hit 0 rows and was counted as a stale 'delivered'");
      assertEquals(
          late503,
          owner.stale("retry"),
          "every late 503 hit 0 rows and was counted as a stale 'retry'");
      assertEquals(
          0, owner.stale("dead") + owner.stale("release"), "A made no dead or release update");
      assertEquals(0, metric(b, FrozenOwner.STALE), "B, the rightful owner, never lost a claim");

      owner.assertChangedNothing();
      for (int i = 0; i < held; i++) {
        assertEquals(
            2,
            x.sink().deliveriesOf("pause-past-lease-" + i),
            "job "
                + heldIds.get(i)
                + " reached the sink twice under one key: A's late send and B's delivery");
      }

      ChaosExperiment.Verdict v = x.finish();
      assertEquals(
          held,
          v.redeliveries(),
          "each held job reached the sink twice (A's late send, B's delivery), every other once");
    }
  }
}
