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

/**
 * The pause experiments' relay A: frozen (SIGSTOP) while it held the claims of {@code jobs}, taken
 * over meanwhile by another relay, then woken up. Holds A's claim tokens, checks the take-over in
 * each job's history, snapshots the tables before A wakes and afterwards checks that nothing A did
 * changed a job: its late token checks change no row and leave one {@code STALE} attempt per job,
 * under A's token.
 */
final class FrozenOwner {
  static final String STALE = "outbox_stale_completions_total";

  /** Every column a relay's token-checked update could change. */
  private static final String MESSAGE_SNAPSHOT =
      "SELECT id, state, attempts, sent_at, claim_token,"
          + " lease_until, claimed_at, last_error FROM outbox_message ORDER BY id";

  private static final String ATTEMPT_SNAPSHOT =
      "SELECT id, message_id, attempt_no, claim_token,"
          + " outcome, error_message FROM outbox_attempt ORDER BY id";

  private final ChaosExperiment x;
  private final ServiceProcess relay;
  private final List<Long> jobs;
  private final Map<Long, String> tokens;
  private List<String> messagesBefore;
  private List<String> attemptsBefore;

  private FrozenOwner(
      ChaosExperiment x, ServiceProcess relay, List<Long> jobs, Map<Long, String> tokens) {
    this.x = x;
    this.relay = relay;
    this.jobs = jobs;
    this.tokens = tokens;
  }

  /**
   * A's settings: it claims all {@code jobs} at once, and its request timeout is far above the
   * whole choreography, so the JDK client never times out a send the sink holds (that would turn a
   * late answer into a retry): A's late results are the sink's answers.
   */
  static Map<String, String> settings(int jobs) {
    Map<String, String> p = new HashMap<>();
    p.put("outbox.relay.concurrency", Integer.toString(jobs));
    p.put("outbox.relay.batch-size", Integer.toString(jobs));
    p.put("quarkus.datasource.postgresql.jdbc.max-size", Integer.toString(jobs + 8));
    p.put("outbox.destinations." + ChaosExperiment.DESTINATION + ".request-timeout", "300s");
    return p;
  }

  /**
   * Reads A's claim tokens now, while A is the only relay: the leased jobs must be exactly {@code
   * jobs}.
   */
  static FrozenOwner holding(ChaosExperiment x, ServiceProcess relay, List<Long> jobs) {
    assertEquals(jobs.size(), x.count("state = 'W'"), "A holds a lease on every held job");
    Map<Long, String> tokens = new HashMap<>();
    for (String row : x.rows("SELECT id, claim_token FROM outbox_message WHERE state = 'W'")) {
      String[] f = row.split("\\|");
      tokens.put(Long.parseLong(f[0]), f[1]);
    }
    assertEquals(Set.copyOf(jobs), tokens.keySet(), "the leased jobs are exactly the held ones");
    return new FrozenOwner(x, relay, jobs, tokens);
  }

  /**
   * While A is frozen: enqueues {@code background} more jobs and starts relay B, which must reap
   * A's expired leases and deliver every job; then {@link #assertTakenOver}. Returns B.
   */
  ServiceProcess takenOverBy(int background) throws Exception {
    x.enqueue(background);
    ServiceProcess b = x.startRelay();
    x.awaitCondition(
        "B to deliver every job, A's expired claims included",
        Duration.ofSeconds(120),
        () -> x.count("state = 'S'") == jobs.size() + background);
    assertTrue(
        metric(b, "outbox_expired_leases_total") >= jobs.size(),
        "B's reaper returned A's " + jobs.size() + " expired leases");
    assertTakenOver();
    return b;
  }

  /**
   * After B delivered everything: A's abandoned attempt of each job is recorded once, as {@code
   * LEASE_EXPIRED} under A's token, and B (another token) delivered it as attempt 2. Then takes the
   * snapshot that {@link #assertChangedNothing} compares with.
   */
  private void assertTakenOver() {
    for (long id : jobs) {
      assertEquals(
          1,
          x.attempts(
              "message_id = ? AND attempt_no = 1 AND outcome = 'LEASE_EXPIRED'"
                  + " AND claim_token = CAST(? AS uuid)",
              id,
              tokens.get(id)),
          "A's abandoned attempt of job " + id + " is recorded once, as LEASE_EXPIRED");
      assertEquals(
          1,
          x.attempts(
              "message_id = ? AND attempt_no = 2 AND outcome = 'DELIVERED'"
                  + " AND claim_token <> CAST(? AS uuid)",
              id,
              tokens.get(id)),
          "B (another token) delivered job " + id + " as attempt 2");
    }
    messagesBefore = x.rows(MESSAGE_SNAPSHOT);
    attemptsBefore = x.rows(ATTEMPT_SNAPSHOT);
  }

  /** A's {@code outbox_stale_completions_total{update="<update>"}}. */
  double stale(String update) {
    return metric(relay, STALE, "update=\"" + update + "\"");
  }

  /** A's stale completions, every update together. */
  double stale() {
    return metric(relay, STALE);
  }

  /**
   * Since {@link #assertTakenOver}: no job changed (state, attempts, sent_at, token, lease), the
   * earlier history stands, and A's late results added exactly one {@code STALE} attempt per job
   * under A's token, next to the job's one {@code DELIVERED} attempt (B's). Returns the number of
   * those STALE rows: A's completion token checks that changed no row.
   */
  long assertChangedNothing() {
    assertEquals(
        messagesBefore,
        x.rows(MESSAGE_SNAPSHOT),
        "A's late renewals and results changed no job (state, attempts, sent_at, token, lease)");
    List<String> attemptsAfter = x.rows(ATTEMPT_SNAPSHOT);
    assertEquals(
        attemptsBefore,
        attemptsAfter.subList(0, attemptsBefore.size()),
        "the attempt history before A woke up stands unchanged");
    long staleRows = 0;
    for (long id : jobs) {
      long n =
          x.attempts(
              "message_id = ? AND outcome = 'STALE' AND attempt_no = 1"
                  + " AND claim_token = CAST(? AS uuid)",
              id,
              tokens.get(id));
      assertEquals(1, n, "A's late result for job " + id + " is one STALE row under A's token");
      assertEquals(
          1,
          x.attempts("message_id = ? AND outcome = 'DELIVERED'", id),
          "job " + id + " has exactly one DELIVERED attempt, B's");
      staleRows += n;
    }
    assertEquals(
        attemptsBefore.size() + jobs.size(),
        attemptsAfter.size(),
        "A's wake-up added exactly one STALE attempt row per held job and nothing else");
    return staleRows;
  }
}
