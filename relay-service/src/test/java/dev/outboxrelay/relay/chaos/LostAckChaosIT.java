package dev.outboxrelay.relay.chaos;

import static dev.outboxrelay.relay.chaos.ChaosExperiment.metric;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment lost-ack: the sink did the work but the relay never learned it. Two ways:
 *
 * <ol>
 *   <li>The acknowledgement is lost on the wire: for the first attempt of every third job the sink
 *       applies the effect and then closes the connection without answering. The relay sees an I/O
 *       error, records a retry and sends again under the same operation id; the sink absorbs the
 *       repeat.
 *   <li>The relay dies between the sink's 200 and its own {@code S} update: on the {@code
 *       killAt}-th answered delivery the sink SIGKILLs the relay, waits for it to be gone and only
 *       then applies and answers. That job (and any other the victim had in flight) is still {@code
 *       W} with its effect applied; a second relay reaps the lease, redelivers under the same key,
 *       and the sink absorbs it.
 * </ol>
 *
 * Both must end with every job {@code S}, none lost, no duplicate effect: at-least-once delivery
 * made exactly-once in effect by the idempotency key.
 */
@ExtendWith(ChaosReporter.class)
class LostAckChaosIT {

  /** Attempt rows matching {@code where}, per job. */
  private static Map<Long, Long> countsPerJob(ChaosExperiment x, String where) {
    Map<Long, Long> counts = new HashMap<>();
    for (String row :
        x.rows(
            "SELECT message_id, COUNT(*) FROM outbox_attempt WHERE "
                + where
                + " GROUP BY message_id")) {
      int bar = row.indexOf('|');
      counts.put(Long.parseLong(row.substring(0, bar)), Long.parseLong(row.substring(bar + 1)));
    }
    return counts;
  }

  @Test
  void effectsWhoseAcknowledgementWasLostAreRedeliveredAndAbsorbed() throws Exception {
    int jobs = ChaosExperiment.scaled(150, 3_000);
    int killAt = jobs / 2;
    String name = "lost-ack";
    try (ChaosExperiment x = ChaosExperiment.start(name)) {
      Set<Long> dropped = ConcurrentHashMap.newKeySet();
      AtomicInteger answered = new AtomicInteger();
      CompletableFuture<ServiceProcess> victimRef = new CompletableFuture<>();
      AtomicReference<ChaosSink.Delivery> killedDuring = new AtomicReference<>();
      CountDownLatch victimKilled = new CountDownLatch(1);
      x.sink()
          .behave(
              d -> {
                int seq = Integer.parseInt(d.key().substring(name.length() + 1));
                if (seq % 3 == 0 && d.attempt() == 1) {
                  dropped.add(d.messageId());
                  return new ChaosSink.Action.ApplyThenDrop();
                }
                if (answered.incrementAndGet() == killAt) {
                  // The relay dies while this request waits for its answer; the answer (and the
                  // effect)
                  // come only once the process is gone, so the relay can never record this
                  // delivery.
                  ServiceProcess victim = victimRef.get(2, TimeUnit.MINUTES);
                  CompletableFuture.runAsync(
                          () -> {
                            try {
                              victim.kill();
                            } catch (InterruptedException e) {
                              Thread.currentThread().interrupt();
                            }
                          })
                      .get(2, TimeUnit.MINUTES);
                  killedDuring.set(d);
                  victimKilled.countDown();
                }
                return ChaosSink.Action.ok();
              });
      x.enqueue(jobs);

      // Not awaitReady: the victim may well be killed before its readiness probe answers.
      ServiceProcess victim = x.launchRelay(Map.of());
      victimRef.complete(victim);
      assertTrue(
          victimKilled.await(2, TimeUnit.MINUTES),
          "the sink killed the victim on its "
              + killAt
              + "th answered delivery\n"
              + x.relayTails());
      assertFalse(victim.alive(), "the victim is dead");
      ChaosSink.Delivery fatal = killedDuring.get();
      x.awaitCondition(
          "the sink to apply the fatal delivery " + fatal.key(),
          Duration.ofSeconds(10),
          () -> x.sink().effects(fatal.body()) == 1);
      assertEquals(
          "W",
          x.rows("SELECT state FROM outbox_message WHERE id = ?", fatal.messageId()).get(0),
          "the fatal delivery was applied at the sink but never recorded: the job is still leased");
      // Every job whose effect is applied but which is not S: its acknowledgement died with the
      // victim (the fatal one, any other answered while it died, any dropped and not yet retried).
      Set<Long> appliedNotRecorded = new HashSet<>();
      for (String row : x.rows("SELECT id, payload FROM outbox_message WHERE state <> 'S'")) {
        int bar = row.indexOf('|');
        if (x.sink().effects(row.substring(bar + 1)) > 0) {
          appliedNotRecorded.add(Long.parseLong(row.substring(0, bar)));
        }
      }
      assertTrue(
          appliedNotRecorded.contains(fatal.messageId()), "the fatal delivery is among them");
      long leasedAtDeath = x.count("state = 'W'");
      assertFalse(dropped.isEmpty(), "the victim met some lost acknowledgements before it died");

      ServiceProcess survivor = x.startRelay();
      x.awaitSettled(Duration.ofSeconds(120));
      ChaosExperiment.Verdict v = x.finish();

      assertTrue(
          metric(survivor, "outbox_expired_leases_total") >= leasedAtDeath,
          "the survivor reaped the " + leasedAtDeath + " leases the victim held when it died");
      // Its earlier attempts (a dropped first one, for every third job) each reached the sink too.
      assertEquals(
          fatal.attempt() + 1,
          x.sink().deliveriesOf(fatal.key()),
          "the fatal job (attempt "
              + fatal.attempt()
              + ") was delivered again, once, by the survivor, under the same key");
      Set<Long> repeated = new HashSet<>(dropped);
      repeated.addAll(appliedNotRecorded);
      // One query per question (not per job): id -> key, DELIVERED rows, recorded first attempts.
      Map<Long, String> keyOf = new HashMap<>();
      for (String row : x.rows("SELECT id, operation_id FROM outbox_message")) {
        int bar = row.indexOf('|');
        keyOf.put(Long.parseLong(row.substring(0, bar)), row.substring(bar + 1));
      }
      Map<Long, Long> delivered = countsPerJob(x, "outcome = 'DELIVERED'");
      Map<Long, Long> failedFirst =
          countsPerJob(x, "attempt_no = 1 AND outcome IN ('RETRY', 'LEASE_EXPIRED')");
      Map<String, Long> sent =
          x.sink().deliveries().stream()
              .collect(Collectors.groupingBy(ChaosSink.Delivery::key, Collectors.counting()));
      for (long id : repeated) {
        String key = keyOf.get(id);
        assertTrue(
            sent.getOrDefault(key, 0L) >= 2,
            key + " lost its acknowledgement and was sent again under the same key");
        assertEquals(
            1L, delivered.getOrDefault(id, 0L), key + " ends with exactly one DELIVERED attempt");
      }
      for (long id : dropped) {
        assertEquals(
            1L,
            failedFirst.getOrDefault(id, 0L),
            "the dropped first attempt of job "
                + id
                + " is recorded as a retry (or, if the victim died first, as an expired lease), never as"
                + " delivered");
      }
      assertTrue(
          v.redeliveries() >= repeated.size(),
          "redeliveries ("
              + v.redeliveries()
              + ") cover"
              + " the "
              + dropped.size()
              + " dropped and "
              + appliedNotRecorded.size()
              + " unrecorded acknowledgements ("
              + repeated.size()
              + " jobs)");
      assertTrue(v.redeliveries() >= dropped.size(), "every ApplyThenDrop job was redelivered");
      assertEquals(0, v.lost());
      assertEquals(0, v.duplicates());
    }
  }
}
