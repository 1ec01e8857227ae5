package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import dev.outboxrelay.outbox.testing.TestDatabases;
import dev.outboxrelay.relay.claim.Backoff;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment poison: among healthy jobs, one the sink always rejects permanently ({@code 422}) and
 * one it always fails transiently ({@code 503}, no Retry-After). Both end {@code D} with a
 * diagnosis: the permanent one at its first attempt (retrying a permanent 4xx cannot help), the
 * transient one after exactly {@code max-attempts} attempts ({@code RETRY} × (max − 1), then {@code
 * DEAD}), each with its last error in {@code last_error} and its whole history in {@code
 * outbox_attempt}.
 *
 * <p>The poison jobs do not hold up the others: every healthy job is delivered at its first
 * attempt, and all of them are {@code S} before the transient poison job has used up its attempts.
 * That ordering is not a race the test hopes to win: the backoff is set so that the poison job's
 * shortest possible path to {@code D} (the sum of the schedule's lower-bound delays, printed) is
 * long compared with delivering the healthy jobs.
 */
@ExtendWith(ChaosReporter.class)
class PoisonChaosIT {

  @Test
  void poisonJobsDieWithADiagnosisWithoutDelayingTheOthers() throws Exception {
    int healthy = ChaosExperiment.scaled(100, 3_000);
    int maxAttempts = 5;
    try (ChaosExperiment x = ChaosExperiment.start("poison")) {
      Map<String, String> overrides = new LinkedHashMap<>();
      overrides.put("outbox.relay.max-attempts", Integer.toString(maxAttempts));
      overrides.put("outbox.relay.backoff.initial-delay", ChaosExperiment.scaled(1, 4) + "s");
      overrides.put("outbox.relay.backoff.max-delay", ChaosExperiment.scaled(5, 20) + "s");
      overrides.put("outbox.relay.backoff.multiplier", "2.0");
      overrides.put("outbox.relay.backoff.jitter", "0.2");
      Map<String, String> config = x.relayProperties();
      config.putAll(overrides);
      Backoff schedule = ChaosExperiment.backoff(config);
      Duration shortestPathToDead = Duration.ZERO;
      for (int attempt = 1; attempt < maxAttempts; attempt++) {
        shortestPathToDead = shortestPathToDead.plus(schedule.lowerBound(attempt));
      }

      List<Long> ids = new ArrayList<>(x.enqueue(healthy / 2));
      List<Long> poison = x.enqueue(2);
      long permanent = poison.get(0);
      long transientPoison = poison.get(1);
      ids.addAll(x.enqueue(healthy - healthy / 2));
      x.sink()
          .behave(
              d ->
                  d.messageId() == permanent
                      ? ChaosSink.Action.status(422)
                      : d.messageId() == transientPoison
                          ? ChaosSink.Action.status(503)
                          : ChaosSink.Action.ok());

      ServiceProcess relay = x.startRelay(overrides);
      x.awaitCondition(
          "every healthy job S", Duration.ofSeconds(120), () -> x.count("state = 'S'") == healthy);
      String transientState =
          x.count("id = ? AND state = 'D'", transientPoison) == 1 ? "D" : "not D";
      x.awaitSettled(Duration.ofSeconds(120));
      ChaosExperiment.Verdict v = x.finish(Set.of(permanent, transientPoison));
      assertEquals(healthy + 2, v.jobs());

      Map<Long, List<ChaosExperiment.Attempt>> history = x.attemptHistory();

      // The permanent failure: D at attempt 1.
      List<ChaosExperiment.Attempt> perm = history.get(permanent);
      assertEquals(
          List.of("DEAD"), outcomes(perm), "a permanent 422 is not retried: one attempt, DEAD");
      assertEquals("HTTP 422", perm.get(0).errorClass());
      assertEquals(
          1,
          TestDatabases.queryLong(
              x.dataSource(), "SELECT attempts FROM outbox_message WHERE id = ?", permanent));
      String permError = lastError(x, permanent);
      assertTrue(
          permError.contains("422") && permError.contains("permanent failure"),
          "last_error of the permanent poison job says why: " + permError);

      // The transient failure: RETRY x (max - 1), then DEAD.
      List<ChaosExperiment.Attempt> trans = history.get(transientPoison);
      List<String> expected = new ArrayList<>();
      for (int i = 1; i < maxAttempts; i++) {
        expected.add("RETRY");
      }
      expected.add("DEAD");
      assertEquals(
          expected,
          outcomes(trans),
          "the transient poison job is tried exactly max-attempts=" + maxAttempts + " times");
      for (int i = 0; i < trans.size(); i++) {
        assertEquals(i + 1, trans.get(i).attemptNo(), "attempt numbers run 1.." + maxAttempts);
        assertEquals("HTTP 503", trans.get(i).errorClass(), "attempt " + (i + 1));
      }
      assertEquals(
          maxAttempts,
          TestDatabases.queryLong(
              x.dataSource(), "SELECT attempts FROM outbox_message WHERE id = ?", transientPoison));
      String transError = lastError(x, transientPoison);
      assertTrue(
          transError.contains("503")
              && transError.contains("gave up after " + maxAttempts + " attempts"),
          "last_error of the transient poison job says why: " + transError);
      assertEquals(
          maxAttempts,
          x.sink().deliveriesOf(x.name() + "-" + (healthy / 2 + 1)),
          "the sink saw every attempt of the transient poison job");

      // The healthy jobs were not held up.
      List<String> retried = new ArrayList<>();
      Instant lastSent = Instant.MIN;
      for (long id : ids) {
        List<ChaosExperiment.Attempt> h = history.get(id);
        if (h.size() != 1 && retried.size() < 10) {
          retried.add(id + ": " + outcomes(h));
        }
        Instant sent = h.get(h.size() - 1).finishedAt();
        lastSent = sent.isAfter(lastSent) ? sent : lastSent;
      }
      assertTrue(
          retried.isEmpty(), "every healthy job delivered at its first attempt; not: " + retried);
      Instant transientDead = trans.get(trans.size() - 1).finishedAt();
      assertEquals(
          "not D",
          transientState,
          "the transient poison job was still being retried when the" + " last healthy job was S");
      assertTrue(
          lastSent.isBefore(transientDead),
          "the last healthy job was delivered ("
              + lastSent
              + ") before the transient poison job died ("
              + transientDead
              + "); its shortest path to D is "
              + shortestPathToDead.toMillis()
              + "ms of backoff");

      assertEquals(
          2.0, relay.metric("outbox_dead_total"), "outbox_dead_total counts the two poison jobs");
      assertEquals(
          2.0,
          relay.metric("outbox_delivery_attempts_total", "outcome=\"dead\""),
          "outbox_delivery_attempts_total{outcome=\"dead\"}");
      assertEquals(
          maxAttempts - 1.0,
          relay.metric("outbox_delivery_attempts_total", "outcome=\"retry\""),
          "outbox_delivery_attempts_total{outcome=\"retry\"}: only the transient poison job retried");
      System.out.println(
          "poison: transient poison job's shortest path to D "
              + shortestPathToDead.toMillis()
              + "ms; it died "
              + Duration.between(trans.get(0).startedAt(), transientDead).toMillis()
              + "ms after its first attempt; last healthy job S "
              + Duration.between(lastSent, transientDead).toMillis()
              + "ms before that");
    }
  }

  private static List<String> outcomes(List<ChaosExperiment.Attempt> attempts) {
    assertNotNull(attempts, "an attempt history");
    return attempts.stream().map(ChaosExperiment.Attempt::outcome).collect(Collectors.toList());
  }

  private static String lastError(ChaosExperiment x, long id) throws Exception {
    try (var c = x.dataSource().getConnection();
        var ps = c.prepareStatement("SELECT last_error FROM outbox_message WHERE id = ?")) {
      ps.setLong(1, id);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return String.valueOf(rs.getString(1));
      }
    }
  }
}
