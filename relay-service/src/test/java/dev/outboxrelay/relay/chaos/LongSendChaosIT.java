package dev.outboxrelay.relay.chaos;

import static dev.outboxrelay.relay.chaos.ChaosExperiment.metric;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Experiment long-send: a send that legitimately takes far longer than the lease (the sink answers
 * after 3.5 leases) while two relays run and healthy jobs flow around it. The owner's heartbeat
 * renews the lease every lease/3 during the send, so the other relay's reaper never sees it expire:
 * the job is sent exactly once, its history is one {@code DELIVERED} attempt, nobody's reaper
 * counts an expired lease, and its {@code lease_until} is seen moving forward while the send runs.
 */
@ExtendWith(ChaosReporter.class)
class LongSendChaosIT {
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final Duration LONG_SEND = LEASE.multipliedBy(7).dividedBy(2);

  @Test
  void aSendLongerThanTheLeaseIsKeptAliveByHeartbeatsAndDeliveredOnce() throws Exception {
    int jobs = ChaosExperiment.scaled(100, 3_000);
    int longJobs = ChaosExperiment.scaled(1, 3);
    String name = "long-send";
    try (ChaosExperiment x = ChaosExperiment.start(name)) {
      Set<String> longKeys = new TreeSet<>();
      for (int i = 1; i <= longJobs; i++) {
        longKeys.add(name + "-" + (i * jobs / (longJobs + 1)));
      }
      x.sink()
          .behave(
              d ->
                  longKeys.contains(d.key())
                      ? ChaosSink.Action.slowOk(LONG_SEND.toMillis())
                      : ChaosSink.Action.ok());
      Map<String, String> relay = Map.of("outbox.relay.lease-duration", LEASE.toMillis() + "ms");
      ServiceProcess r1 = x.startRelay(relay);
      ServiceProcess r2 = x.startRelay(relay);
      List<Long> ids = x.enqueue(jobs);
      Map<Long, String> longIds = new HashMap<>();
      for (int i = 0; i < jobs; i++) {
        if (longKeys.contains(name + "-" + i)) {
          longIds.put(ids.get(i), name + "-" + i);
        }
      }

      // Sample every long job's lease while it runs, until all of them are sent.
      Map<Long, Set<Instant>> leaseSeen = new HashMap<>();
      longIds.keySet().forEach(id -> leaseSeen.put(id, new TreeSet<>()));
      String in = String.join(",", longIds.keySet().stream().map(String::valueOf).toList());
      x.awaitCondition(
          "the long sends to finish",
          Duration.ofSeconds(120),
          () -> {
            boolean allSent = true;
            for (String row :
                x.rows(
                    "SELECT id, state, extract(epoch FROM lease_until) * 1000"
                        + " FROM outbox_message WHERE id IN ("
                        + in
                        + ")")) {
              String[] f = row.split("\\|");
              if (!f[2].equals("null")) {
                leaseSeen
                    .get(Long.parseLong(f[0]))
                    .add(Instant.ofEpochMilli((long) Double.parseDouble(f[2])));
              }
              allSent &= f[1].equals("S");
            }
            return allSent;
          });
      x.awaitSettled(Duration.ofSeconds(120));
      ChaosExperiment.Verdict v = x.finish();

      for (Map.Entry<Long, String> e : longIds.entrySet()) {
        long id = e.getKey();
        String key = e.getValue();
        assertEquals(1, x.sink().deliveriesOf(key), key + " reached the sink exactly once");
        assertEquals(
            List.of("1|DELIVERED"),
            x.rows(
                "SELECT attempt_no, outcome FROM outbox_attempt"
                    + " WHERE message_id = ? ORDER BY id",
                id),
            key + " has one attempt, delivered");
        List<String> times =
            x.rows(
                "SELECT extract(epoch FROM sent_at - claimed_at) * 1000,"
                    + " extract(epoch FROM claimed_at) * 1000 FROM outbox_message WHERE id = ?",
                id);
        String[] t = times.get(0).split("\\|");
        long heldMillis = (long) Double.parseDouble(t[0]);
        Instant claimedAt = Instant.ofEpochMilli((long) Double.parseDouble(t[1]));
        assertTrue(
            heldMillis >= LONG_SEND.toMillis(),
            key
                + " was leased for the whole "
                + LONG_SEND
                + " send ("
                + heldMillis
                + " ms), more than "
                + LONG_SEND.toMillis() / LEASE.toMillis()
                + " leases");
        List<Instant> seen = new ArrayList<>(leaseSeen.get(id));
        assertTrue(
            seen.size() >= 3,
            key
                + ": lease_until moved forward during the send (heartbeats"
                + " every lease/3); distinct values seen: "
                + seen);
        Instant last = seen.get(seen.size() - 1);
        assertTrue(
            last.isAfter(claimedAt.plus(LEASE.multipliedBy(2))),
            key
                + ": the lease was"
                + " extended well past the claim's original lease (claimed "
                + claimedAt
                + ", last lease_until "
                + last
                + ")");
      }
      assertEquals(0, x.attempts("outcome = 'LEASE_EXPIRED'"), "no lease expired anywhere");
      assertEquals(
          0, x.attempts("outcome <> 'DELIVERED'"), "every attempt of every job was a delivery");
      for (ServiceProcess r : List.of(r1, r2)) {
        assertEquals(
            0,
            metric(r, "outbox_expired_leases_total"),
            r.name() + "'s reaper found no expired lease");
        assertEquals(
            0, metric(r, "outbox_stale_completions_total"), r.name() + " never lost a claim");
      }
      assertEquals(0, v.redeliveries(), "nothing was sent twice");
    }
  }
}
