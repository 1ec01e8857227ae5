package dev.outboxrelay.relay.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.testing.TimeSpans;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * FIFO per ordering key (seed 004's conversation groups) with three relay processes: 100 keys x 50
 * jobs, the first attempt of every tenth job fails (503). Every key's deliveries reach the sink one
 * at a time and in id order, retries included (a failing job holds back the later jobs of its key);
 * different keys proceed in parallel, shown by how many keys have a delivery in flight at once and
 * by the sum of per-key busy spans over the wall time.
 */
class OrderingKeyFifoIT {
  static final int KEYS = 100;
  static final int JOBS_PER_KEY = 50;

  @Test
  void eachKeyIsDeliveredInIdOrderWhileKeysRunInParallel() throws Exception {
    try (ChaosExperiment x = ChaosExperiment.start("ordering-fifo")) {
      Map<Long, Integer> keyOf = new ConcurrentHashMap<>();
      Map<Integer, AtomicInteger> inFlight = new ConcurrentHashMap<>();
      AtomicInteger keysInFlight = new AtomicInteger();
      AtomicInteger maxKeysInFlight = new AtomicInteger();
      List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());
      x.sink()
          .behave(
              d -> {
                int key = keyOf.get(d.messageId());
                if (inFlight.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet() > 1) {
                  violations.add(
                      "key "
                          + key
                          + ": job "
                          + d.messageId()
                          + " arrived while another job of its key was in flight");
                }
                maxKeysInFlight.accumulateAndGet(keysInFlight.incrementAndGet(), Math::max);
                try {
                  TimeSpans.simulateWork(
                      Duration.ofMillis(5)); // so that a concurrent delivery of a key would overlap
                } finally {
                  keysInFlight.decrementAndGet();
                  inFlight.get(key).decrementAndGet();
                }
                return d.messageId() % 10 == 0 && d.attempt() == 1
                    ? ChaosSink.Action.status(503)
                    : ChaosSink.Action.ok();
              });
      // Keys interleaved in id order (job i belongs to key i % KEYS), as concurrent business
      // entities would produce them.
      List<Long> ids =
          x.enqueue(
              KEYS * JOBS_PER_KEY, i -> OutboxMessage.builder().orderingKey("key-" + (i % KEYS)));
      for (int i = 0; i < ids.size(); i++) {
        keyOf.put(ids.get(i), i % KEYS);
      }
      long t0 = System.nanoTime();
      for (int r = 0; r < 3; r++) {
        x.launchRelay(Map.of());
      }
      x.awaitSettled(Duration.ofMinutes(5));
      double seconds = (System.nanoTime() - t0) / 1e9;
      ChaosExperiment.Verdict v = x.finish();

      // Per key, in arrival order, message ids never go back (a retry repeats the same id).
      Map<Integer, List<ChaosSink.Delivery>> byKey = new HashMap<>();
      for (ChaosSink.Delivery d : x.sink().deliveries()) {
        byKey.computeIfAbsent(keyOf.get(d.messageId()), k -> new ArrayList<>()).add(d);
      }
      double busy = 0;
      for (var e : byKey.entrySet()) {
        List<ChaosSink.Delivery> ds = e.getValue();
        ds.sort(java.util.Comparator.comparingLong(ChaosSink.Delivery::receivedNanos));
        for (int i = 1; i < ds.size(); i++) {
          if (ds.get(i).messageId() < ds.get(i - 1).messageId()) {
            violations.add(
                "key "
                    + e.getKey()
                    + ": job "
                    + ds.get(i).messageId()
                    + " arrived after "
                    + ds.get(i - 1).messageId());
          }
        }
        busy += (ds.get(ds.size() - 1).receivedNanos() - ds.get(0).receivedNanos()) / 1e9;
      }
      assertEquals(
          List.of(),
          violations.subList(0, Math.min(20, violations.size())),
          "every key delivered one at a time, in id order");
      assertEquals(KEYS, byKey.size());
      long failedFirst = ids.stream().filter(id -> id % 10 == 0).count();
      assertEquals(failedFirst, x.attempts("outcome = 'RETRY'"), "every tenth job failed once");
      double parallelism = busy / seconds;
      System.out.printf(
          java.util.Locale.ROOT,
          "ORDERING keys=%d jobs=%d relays=3 seconds=%.1f jobs_per_s=%.0f"
              + " max_keys_in_flight=%d parallelism=%.1f redeliveries=%d%n",
          KEYS,
          v.jobs(),
          seconds,
          v.jobs() / seconds,
          maxKeysInFlight.get(),
          parallelism,
          v.redeliveries());
      assertTrue(
          maxKeysInFlight.get() > 10,
          "keys proceed in parallel (max " + maxKeysInFlight.get() + " keys in flight at once)");
      assertTrue(
          parallelism > 5, "per-key busy time adds up to " + parallelism + "x the wall time");
    }
  }
}
