package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TimeSpans;
import dev.outboxrelay.relay.claim.Backoff;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment sink-outage: the sink goes away for longer than several backoff steps (connections
 * refused), then comes back answering {@code 503} with {@code Retry-After} for a while, then
 * returns to normal. Every job ends {@code S}, once.
 *
 * <p>The point is how the relay waits. A relay retrying in a tight loop would hammer a sink that is
 * down; this one backs off. The bound on each job's attempts is computed from the configured
 * schedule: with the shortest delays the schedule can draw ({@link Backoff#lowerBound}: initial
 * delay × multiplier<sup>n-1</sup>, capped at max-delay, minus the full jitter), at most {@code
 * fit(outage)} attempts start during the outage, at most {@code retryPhase / Retry-After + 1}
 * during the 503 phase (each 503 postpones the job by exactly Retry-After), then one that succeeds;
 * plus one of slack for an attempt straddling a phase switch. Independently, every two consecutive
 * attempts of a job are at least the lower-bound delay apart, by the database clock ({@code
 * finished_at} of one attempt, which is also the {@code now()} its {@code deliver_after} was
 * computed from, to {@code started_at} of the next).
 *
 * <p>Readiness: with {@code ready-max-backlog-age} small for this relay, the relay reports itself
 * not ready (503, naming the setting) while the backlog is not draining, and ready again once it
 * has drained.
 */
@ExtendWith(ChaosReporter.class)
class SinkOutageChaosIT {
  /** Rounding of {@code started_at} (database now minus the send's whole milliseconds). */
  private static final Duration CLOCK_TOLERANCE = Duration.ofMillis(5);

  @Test
  void deliveryBacksOffDuringAnOutageAndResumesAfterIt() throws Exception {
    int jobs = ChaosExperiment.scaled(50, 2_000);
    Duration outage = Duration.ofSeconds(ChaosExperiment.scaled(5, 20));
    Duration retryPhase = Duration.ofSeconds(ChaosExperiment.scaled(3, 6));
    int retryAfterSeconds = 1;
    try (ChaosExperiment x = ChaosExperiment.start("sink-outage")) {
      Map<String, String> overrides = new LinkedHashMap<>();
      overrides.put("outbox.relay.max-attempts", "1000"); // nobody may die of the outage
      overrides.put("outbox.relay.backoff.multiplier", "2.0");
      overrides.put("outbox.relay.backoff.jitter", "0.2");
      overrides.put("outbox.relay.ready-max-backlog-age", "2s");
      Map<String, String> config = x.relayProperties();
      config.putAll(overrides);
      Backoff schedule = ChaosExperiment.backoff(config);
      Duration backlogLimit =
          ChaosExperiment.duration(config.get("outbox.relay.ready-max-backlog-age"));
      Duration retryAfter = Duration.ofSeconds(retryAfterSeconds);

      ServiceProcess relay = x.startRelay(overrides);

      // Phase 1: connections refused.
      long outageStart = System.nanoTime();
      x.sink().stop();
      List<Long> ids = x.enqueue(jobs);
      String downBody = null;
      while (System.nanoTime() - outageStart < outage.toNanos()) {
        HttpResponse<String> ready = relay.get("/q/health/ready");
        if (ready.statusCode() == 503 && ready.body().contains("ready-max-backlog-age")) {
          downBody = ready.body();
        }
        TimeSpans.letPass(
            Duration.ofMillis(
                100)); // samples readiness through the outage: its length is the fault
      }
      assertEquals(
          0, x.sink().deliveries().size(), "nothing can reach a sink that refuses connections");
      assertTrue(
          x.attempts("outcome = 'RETRY'") >= jobs,
          "every job was tried and failed at least once" + " during the outage");
      assertTrue(
          downBody != null,
          "readiness went DOWN (503) naming ready-max-backlog-age="
              + backlogLimit
              + " during the "
              + outage
              + " outage; last answer: "
              + relay.get("/q/health/ready").body().replaceAll("\\s+", " "));

      // Phase 2: the sink is back but overloaded: 503 with Retry-After.
      x.sink().behave(d -> ChaosSink.Action.unavailable(retryAfterSeconds));
      x.sink().start();
      long retryPhaseStart = System.nanoTime();
      Duration outageLength = Duration.ofNanos(retryPhaseStart - outageStart);
      x.awaitCondition(
          "the sink to receive deliveries again (answering 503)",
          Duration.ofSeconds(30),
          () -> !x.sink().deliveries().isEmpty());
      long leftInPhase = retryPhase.toNanos() - (System.nanoTime() - retryPhaseStart);
      if (leftInPhase > 0) {
        TimeSpans.letPass(Duration.ofNanos(leftInPhase)); // the phase is a span of time
      }

      // Phase 3: normal again.
      x.sink().behave(d -> ChaosSink.Action.ok());
      Duration retryPhaseLength = Duration.ofNanos(System.nanoTime() - retryPhaseStart);
      x.awaitSettled(Duration.ofSeconds(120));
      x.awaitCondition(
          "readiness UP (200) once the backlog drained",
          Duration.ofSeconds(30),
          () -> {
            try {
              return relay.get("/q/health/ready").statusCode() == 200;
            } catch (Exception e) {
              return false;
            }
          });
      ChaosExperiment.Verdict v = x.finish();
      assertEquals(jobs, v.jobs());

      // The bound on attempts per job, from the schedule's shortest delays.
      int fitInOutage = 1;
      Duration elapsed = Duration.ZERO;
      while (elapsed.plus(schedule.lowerBound(fitInOutage)).compareTo(outageLength) < 0) {
        elapsed = elapsed.plus(schedule.lowerBound(fitInOutage));
        fitInOutage++;
      }
      long inRetryPhase = retryPhaseLength.toMillis() / retryAfter.toMillis() + 1;
      long bound = fitInOutage + inRetryPhase + 1 /* the success */ + 1 /* slack: a phase switch */;
      String boundText =
          "at most "
              + bound
              + " attempts per job = "
              + fitInOutage
              + " that fit into the "
              + outageLength.toMillis()
              + "ms outage with the shortest delays of the schedule (initial "
              + config.get("outbox.relay.backoff.initial-delay")
              + " x "
              + config.get("outbox.relay.backoff.multiplier")
              + "^n, max "
              + config.get("outbox.relay.backoff.max-delay")
              + ", jitter "
              + config.get("outbox.relay.backoff.jitter")
              + ") + "
              + inRetryPhase
              + " in the "
              + retryPhaseLength.toMillis()
              + "ms Retry-After="
              + retryAfterSeconds
              + "s phase + 1 success + 1 slack";

      Map<Long, List<ChaosExperiment.Attempt>> history = x.attemptHistory();
      int maxSeen = 0;
      List<String> tooClose = new ArrayList<>();
      for (long id : ids) {
        List<ChaosExperiment.Attempt> attempts = history.get(id);
        assertTrue(
            attempts != null && !attempts.isEmpty(), "job " + id + " has an attempt history");
        maxSeen = Math.max(maxSeen, attempts.size());
        assertTrue(
            attempts.size() <= bound,
            "job "
                + id
                + " was tried "
                + attempts.size()
                + " times: a tight loop, not backoff; "
                + boundText);
        assertEquals(
            "DELIVERED",
            attempts.get(attempts.size() - 1).outcome(),
            "job " + id + " ends delivered");
        for (int i = 0; i + 1 < attempts.size(); i++) {
          ChaosExperiment.Attempt a = attempts.get(i);
          ChaosExperiment.Attempt next = attempts.get(i + 1);
          assertEquals("RETRY", a.outcome(), "job " + id + " attempt " + a.attemptNo());
          Duration required =
              "HTTP 503".equals(a.errorClass()) ? retryAfter : schedule.lowerBound(a.attemptNo());
          Duration gap = Duration.between(a.finishedAt(), next.startedAt());
          if (gap.plus(CLOCK_TOLERANCE).compareTo(required) < 0 && tooClose.size() < 10) {
            tooClose.add(
                "job "
                    + id
                    + " attempt "
                    + a.attemptNo()
                    + " ("
                    + a.errorClass()
                    + ") -> "
                    + next.attemptNo()
                    + ": "
                    + gap.toMillis()
                    + "ms apart, the schedule allows no less than "
                    + required.toMillis()
                    + "ms");
          }
        }
      }
      assertTrue(
          tooClose.isEmpty(),
          "consecutive attempts closer than the backoff's lower bound:\n"
              + String.join("\n", tooClose));
      assertTrue(
          maxSeen >= 3,
          "the outage spanned several backoff steps (most attempts of a job: " + maxSeen + ")");
      assertTrue(
          relay.metric("outbox_delivery_attempts_total", "outcome=\"retry\"") > 0,
          "the relay counted its retries in outbox_delivery_attempts_total{outcome=\"retry\"}");
      System.out.println("sink-outage: most attempts of a job " + maxSeen + "; " + boundText);
    }
  }
}
