package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment 8, graceful-stop: SIGTERM during load. Sends in flight that fit in the shutdown grace
 * finish and are recorded; sends that outlive it are interrupted and their jobs released to {@code
 * R} without counting an attempt; after the process exits no job is left in {@code W} (nothing
 * waits for a lease to expire), and another relay finishes the rest.
 */
@ExtendWith(ChaosReporter.class)
class GracefulStopChaosIT {
  static final int LONG_JOBS = 3;
  static final Duration GRACE = Duration.ofSeconds(3);

  @Test
  void sigtermFinishesInFlightSendsAndReleasesTheRest() throws Exception {
    int jobs = ChaosExperiment.scaled(200, 5_000);
    try (ChaosExperiment x = ChaosExperiment.start("graceful-stop")) {
      List<Long> ids = x.enqueue(jobs);
      // The first jobs (claimed first) take far longer than the grace period, on their first
      // delivery only; every other send takes 100-300ms.
      Set<Long> longJobs = Set.copyOf(ids.subList(0, LONG_JOBS));
      Set<Long> slowedOnce = ConcurrentHashMap.newKeySet();
      x.sink()
          .behave(
              d ->
                  longJobs.contains(d.messageId()) && slowedOnce.add(d.messageId())
                      ? ChaosSink.Action.slowOk(20_000)
                      : ChaosSink.Action.slowOk(100 + d.messageId() % 200));
      ServiceProcess first =
          x.startRelay(Map.of("outbox.relay.shutdown-grace", GRACE.toMillis() + "ms"));
      x.awaitCondition(
          "the long sends to start and 30 jobs to be sent",
          Duration.ofSeconds(60),
          () ->
              x.sink().deliveries().stream().filter(d -> longJobs.contains(d.messageId())).count()
                      == LONG_JOBS
                  && x.count("state = 'S'") >= 30);
      long inFlightAtTerm = x.count("state = 'W'");

      long t0 = System.nanoTime();
      assertEquals(
          143,
          first.stop(Duration.ofSeconds(60)),
          "SIGTERM ends the relay through its shutdown hook");
      double exitSeconds = (System.nanoTime() - t0) / 1e9;
      assertEquals(
          0,
          x.count("state = 'W'"),
          "no job is left leased after the relay exited ("
              + inFlightAtTerm
              + " were in flight at SIGTERM)");
      assertTrue(
          first.logText().contains("stopped (" + LONG_JOBS + " job(s) released unfinished)")
              || first.logText().contains("released to ready on shutdown"),
          first.tail());
      for (long id : longJobs) {
        assertEquals(
            1,
            x.count("id = ? AND state = 'R' AND attempts = 0", id),
            "the interrupted send of job " + id + " was released without counting an attempt");
        assertEquals(
            0, x.attempts("message_id = ?", id), "no attempt is recorded for a released job");
      }
      // Every other send the sink saw from the stopped relay finished and was recorded as sent.
      Set<Long> sentToSink =
          x.sink().deliveries().stream()
              .map(ChaosSink.Delivery::messageId)
              .filter(id -> !longJobs.contains(id))
              .collect(Collectors.toSet());
      for (long id : sentToSink) {
        assertEquals(
            1,
            x.count("id = ? AND state = 'S'", id),
            "job "
                + id
                + " was in flight at SIGTERM and its send finished within the grace period");
      }

      x.startRelay();
      x.awaitSettled(Duration.ofSeconds(180));
      ChaosExperiment.Verdict v = x.finish();
      assertEquals(0, x.attempts("outcome = 'LEASE_EXPIRED'"), "no lease had to expire");
      assertTrue(v.redeliveries() <= LONG_JOBS, "only the interrupted sends were repeated");
      System.out.printf(
          "CHAOS-DETAIL graceful-stop in_flight_at_sigterm=%d exit_seconds=%.1f grace=%s%n",
          inFlightAtTerm, exitSeconds, GRACE);
    }
  }
}
