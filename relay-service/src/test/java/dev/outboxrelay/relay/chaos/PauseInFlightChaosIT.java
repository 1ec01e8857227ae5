package dev.outboxrelay.relay.chaos;

import static dev.outboxrelay.relay.chaos.ChaosExperiment.metric;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment pause-in-flight: a relay is frozen (SIGSTOP) past its lease while its heartbeat pass
 * and a completion batch are in flight, then woken (SIGCONT). Nothing may be lost, nothing applied
 * twice, and its stale count must be exactly its token checks that changed no row.
 *
 * <p>Choreography: relay A claims every job. The sink answers A's sends 200 at once, except the
 * anchor's (the lowest id), which it holds; the answered jobs wait in A's completion batch, which
 * cannot flush before the anchor's send ends (the batch is larger than A's jobs, its wait longer
 * than the experiment). The test then locks the anchor's row, so A's next heartbeat pass waits in
 * the database, and freezes A: a heartbeat statement and a completion batch in flight. While A is
 * frozen the database gives up on the waiting pass (the test cancels it, as a {@code lock_timeout}
 * would: its transaction keeps no row), the leases run out, and relay B reaps and delivers every
 * job. A wakes up: its heartbeat pass answers with an error and the next one renews nothing; only
 * the anchor's claim, whose send is still running, is reported lost by the heartbeat (once); the
 * answered jobs are recording, so their lost claims are left to their completion to report. Then
 * the sink answers the anchor's send, the batch flushes, and its token check changes no row.
 */
@ExtendWith(ChaosReporter.class)
class PauseInFlightChaosIT {
  @Test
  void aRelayFrozenMidHeartbeatAndMidCompletionChangesNothingAndCountsEachStaleCheckOnce()
      throws Exception {
    int jobs = ChaosExperiment.scaled(16, 64);
    int background = ChaosExperiment.scaled(100, 5_000);
    try (ChaosExperiment x = ChaosExperiment.start("pause-in-flight")) {
      List<Long> ids = x.enqueue(jobs);
      // The lowest id: the row A's heartbeat statement reaches first (it renews in id order), so
      // while it waits there it holds no other row.
      long anchor = ids.get(0);
      Map<Long, Integer> answers = new HashMap<>();
      ids.forEach(id -> answers.put(id, 200));
      FirstSends sendsOfA = new FirstSends(answers, Set.of(anchor));
      x.sink().behave(sendsOfA);

      Map<String, String> settings = FrozenOwner.settings(jobs);
      // The answered jobs wait for the anchor: a batch never full, a wait never over.
      settings.put("outbox.relay.completion-batch-size", Integer.toString(jobs + 1));
      settings.put("outbox.relay.completion-max-wait", "10m");
      ServiceProcess a = x.startRelay(settings);
      x.awaitCondition(
          "A to have sent every job, the anchor's send held",
          Duration.ofSeconds(60),
          () -> sendsOfA.arrived() == jobs);
      FrozenOwner owner = FrozenOwner.holding(x, a, ids);
      assertEquals(
          0,
          x.count("state = 'S'"),
          "A's completion batch has not flushed: it waits for the anchor");

      try (RowLock lock = RowLock.on(x.dataSource(), anchor)) {
        // A's heartbeat is the only statement that waits for a row A holds (claims and the reaper
        // skip locked rows, and the completion batch is not flushing): its next pass waits here.
        x.awaitCondition(
            "A's heartbeat pass to wait for the anchor's row",
            Duration.ofSeconds(30),
            () -> lock.waiter().isPresent());
        long pass = lock.waiter().orElseThrow();
        a.pause();
        lock.cancelWaiter(pass);
        x.awaitCondition(
            "the database to give up on A's heartbeat pass",
            Duration.ofSeconds(30),
            () -> lock.waiter().isEmpty());
      }
      ServiceProcess b = owner.takenOverBy(background);

      a.resume();
      x.awaitCondition(
          "A's heartbeat to find the anchor's claim lost",
          Duration.ofSeconds(60),
          () -> owner.stale("renew") >= 1);
      assertEquals(
          0, owner.stale("delivered"), "A's completion batch still waits for the anchor's send");

      sendsOfA.release();
      x.awaitCondition(
          "A's completion batch to record its " + jobs + " jobs",
          Duration.ofSeconds(60),
          () -> x.attempts("outcome = 'STALE'") == jobs);
      x.awaitCondition(
          "A's stale counter to count them",
          Duration.ofSeconds(30),
          () -> owner.stale("delivered") >= jobs);
      long staleChecks = owner.assertChangedNothing();
      double renew = owner.stale("renew");
      // B owns every job, so each of A's completion token checks changed no row: one STALE row
      // each.
      assertEquals(jobs, staleChecks, "every job's completion token check by A changed no row");
      assertEquals(
          staleChecks,
          owner.stale("delivered"),
          "each completion token check that changed no row is counted once, as a stale 'delivered'");
      // The anchor is counted by the heartbeat; an answered job only if A froze before its worker
      // took the answer (it was not recording yet): never more than once per claim.
      assertTrue(
          renew >= 1 && renew <= jobs,
          "the heartbeat reported the anchor's lost claim, each"
              + " lost claim at most once; reported "
              + renew
              + " of "
              + jobs);
      assertEquals(
          0,
          owner.stale("retry") + owner.stale("dead") + owner.stale("release"),
          "A made no retry, dead or release update");
      assertEquals(
          staleChecks + renew,
          owner.stale(),
          "A's stale count is exactly its token checks that changed no row (completions, and the"
              + " renewals of claims not recording)");
      assertEquals(0, metric(b, FrozenOwner.STALE), "B, the rightful owner, never lost a claim");
      for (int i = 0; i < jobs; i++) {
        assertEquals(
            2,
            x.sink().deliveriesOf("pause-in-flight-" + i),
            "job "
                + ids.get(i)
                + " reached the sink twice under one key: A's send and B's delivery");
      }

      x.figure("stale", (long) owner.stale());
      x.figure("stale_renew", (long) renew);
      x.figure("stale_rows", staleChecks);
      ChaosExperiment.Verdict v = x.finish();
      assertEquals(
          jobs,
          v.redeliveries(),
          "each of A's jobs reached the sink twice (A's send, B's delivery), every other once");
    }
  }
}
