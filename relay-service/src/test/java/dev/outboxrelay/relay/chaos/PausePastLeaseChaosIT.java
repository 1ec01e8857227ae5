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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment pause-past-lease: a relay is frozen (SIGSTOP, like a long GC pause or a suspended
 * VM) in the middle of its sends for longer than its lease. Another relay's reaper re-offers the
 * jobs and that relay delivers them. When the frozen relay wakes up (SIGCONT) it still believes
 * it owns them: its heartbeats, and then the late results of its old sends (some 200, some 503),
 * all run as token-checked updates that change no row. They are counted in
 * {@code outbox_stale_completions_total{update="renew|delivered|retry"}}, recorded only as
 * {@code STALE} attempts, and change nothing: every job stays {@code S} with the new owner's
 * attempt history, and the sink absorbs the late repeats by idempotency key.
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
  private static final String STALE = "outbox_stale_completions_total";
  /** Every column a relay's token-checked update could change. */
  private static final String MESSAGE_SNAPSHOT = "SELECT id, state, attempts, sent_at, claim_token,"
      + " lease_until, claimed_at, last_error FROM outbox_message ORDER BY id";
  private static final String ATTEMPT_SNAPSHOT = "SELECT id, message_id, attempt_no, claim_token,"
      + " outcome, error_message FROM outbox_attempt ORDER BY id";

  @Test
  void lateResultsOfAPausedOwnerAreStaleAndChangeNothing() throws Exception {
    int held = ChaosExperiment.scaled(16, 24);
    int background = ChaosExperiment.scaled(100, 3_000);
    try (ChaosExperiment x = ChaosExperiment.start("pause-past-lease")) {
      List<Long> heldIds = x.enqueue(held);
      Set<Long> heldSet = Set.copyOf(heldIds);
      Map<Long, Integer> lateStatus = new HashMap<>();
      for (int i = 0; i < heldIds.size(); i++) {
        lateStatus.put(heldIds.get(i), i % 2 == 0 ? 200 : 503);
      }
      long late200 = lateStatus.values().stream().filter(s -> s == 200).count();
      long late503 = held - late200;

      // A is the only relay while these jobs are fresh, so attempt 1 of a held job is A's send.
      // B only ever sees them as attempt 2 (after the reaper counted A's expired attempt).
      Set<Long> heldAtSink = ConcurrentHashMap.newKeySet();
      CountDownLatch releaseA = new CountDownLatch(1);
      x.sink().behave(d -> {
        if (heldSet.contains(d.messageId()) && d.attempt() == 1) {
          heldAtSink.add(d.messageId());
          if (!releaseA.await(5, TimeUnit.MINUTES)) {
            throw new IllegalStateException("A's send of " + d.key() + " was never released");
          }
          return ChaosSink.Action.status(lateStatus.get(d.messageId()));
        }
        return ChaosSink.Action.ok();
      });

      // A claims all held jobs at once; its request timeout is raised far above the whole
      // choreography so the JDK client never times a held send out (that would turn the late
      // 200s into retries): the late results must be the sink's answers.
      ServiceProcess a = x.startRelay(Map.of(
          "outbox.relay.concurrency", Integer.toString(held),
          "outbox.relay.batch-size", Integer.toString(held),
          "quarkus.datasource.postgresql.jdbc.max-size", Integer.toString(held + 8),
          "outbox.destinations." + ChaosExperiment.DESTINATION + ".request-timeout", "300s"));
      x.awaitCondition("A to have every held job's send in flight at the sink", Duration.ofSeconds(60),
          () -> heldAtSink.size() == held);
      assertEquals(held, x.count("state = 'W'"), "A holds a lease on every held job");
      Map<Long, String> tokenOfA = new HashMap<>();
      for (String row : x.rows("SELECT id, claim_token FROM outbox_message WHERE state = 'W'")) {
        String[] f = row.split("\\|");
        tokenOfA.put(Long.parseLong(f[0]), f[1]);
      }
      assertEquals(heldSet, tokenOfA.keySet(), "the leased jobs are exactly the held ones");

      a.pause();
      x.enqueue(background);
      ServiceProcess b = x.startRelay();
      x.awaitCondition("B to deliver every job, A's expired claims included", Duration.ofSeconds(120),
          () -> x.count("state = 'S'") == held + background);
      assertTrue(metric(b, "outbox_expired_leases_total") >= held,
          "B's reaper returned A's " + held + " expired leases");
      for (long id : heldIds) {
        assertEquals(1, x.attempts("message_id = ? AND attempt_no = 1 AND outcome = 'LEASE_EXPIRED'"
            + " AND claim_token = CAST(? AS uuid)", id, tokenOfA.get(id)),
            "A's abandoned attempt of job " + id + " is recorded once, as LEASE_EXPIRED");
        assertEquals(1, x.attempts("message_id = ? AND attempt_no = 2 AND outcome = 'DELIVERED'"
            + " AND claim_token <> CAST(? AS uuid)", id, tokenOfA.get(id)),
            "B (another token) delivered job " + id + " as attempt 2");
      }
      List<String> messagesBefore = x.rows(MESSAGE_SNAPSHOT);
      List<String> attemptsBefore = x.rows(ATTEMPT_SNAPSHOT);

      // Wake A with its sends still held: only its heartbeats run, and every one finds its lease
      // gone (at most one lost renewal per job: the heartbeat stops after it).
      a.resume();
      x.awaitCondition("A's heartbeats to find all " + held + " leases lost", Duration.ofSeconds(60),
          () -> metric(a, STALE, "update=\"renew\"") >= held);
      assertEquals(0, metric(a, STALE, "update=\"delivered\"") + metric(a, STALE, "update=\"retry\""),
          "no send of A has completed yet: they are still held at the sink");

      releaseA.countDown();
      x.awaitCondition("A to record the late results of its " + held + " sends",
          Duration.ofSeconds(60), () -> x.attempts("outcome = 'STALE'") == held);
      x.awaitCondition("A's stale counters to count them", Duration.ofSeconds(30),
          () -> metric(a, STALE, "update=\"delivered\"") + metric(a, STALE, "update=\"retry\"") >= held);
      assertEquals(held, metric(a, STALE, "update=\"renew\""), "one lost renewal per held job");
      assertEquals(late200, metric(a, STALE, "update=\"delivered\""),
          "every late 200 hit 0 rows and was counted as a stale 'delivered'");
      assertEquals(late503, metric(a, STALE, "update=\"retry\""),
          "every late 503 hit 0 rows and was counted as a stale 'retry'");
      assertEquals(0, metric(a, STALE, "update=\"dead\"") + metric(a, STALE, "update=\"release\""),
          "A made no dead or release update");
      assertEquals(0, metric(b, STALE), "B, the rightful owner, never lost a claim");

      assertEquals(messagesBefore, x.rows(MESSAGE_SNAPSHOT),
          "A's late renewals and results changed no job (state, attempts, sent_at, token, lease)");
      List<String> attemptsAfter = x.rows(ATTEMPT_SNAPSHOT);
      assertEquals(attemptsBefore, attemptsAfter.subList(0, attemptsBefore.size()),
          "the attempt history before A woke up stands unchanged");
      for (int i = 0; i < held; i++) {
        long id = heldIds.get(i);
        String token = tokenOfA.get(id);
        assertEquals(1, x.attempts("message_id = ? AND outcome = 'STALE' AND attempt_no = 1"
            + " AND claim_token = CAST(? AS uuid)", id, token),
            "A's late result for job " + id + " is one STALE row under A's token");
        assertEquals(1, x.attempts("message_id = ? AND outcome = 'DELIVERED'", id),
            "job " + id + " has exactly one DELIVERED attempt, B's");
        assertEquals(2, x.sink().deliveriesOf("pause-past-lease-" + i),
            "job " + id + " reached the sink twice under one key: A's late send and B's delivery");
      }
      assertEquals(attemptsBefore.size() + held, attemptsAfter.size(),
          "A's wake-up added exactly one STALE attempt row per held job and nothing else");

      ChaosExperiment.Verdict v = x.finish();
      assertEquals(held, v.redeliveries(),
          "each held job reached the sink twice (A's late send, B's delivery), every other once");
    }
  }
}
