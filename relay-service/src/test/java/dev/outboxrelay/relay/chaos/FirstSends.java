package dev.outboxrelay.relay.chaos;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The sink's behaviour in the pause experiments: attempt 1 of each job of {@code answers} (relay
 * A's send, while A is the only relay) is answered with that job's status, the ones of {@code held}
 * only once {@link #release()} is called; every other delivery (B's) is answered 200 at once.
 */
final class FirstSends implements ChaosSink.Behaviour {
  private final Map<Long, Integer> answers;
  private final Set<Long> held;
  private final Set<Long> arrived = ConcurrentHashMap.newKeySet();
  private final CountDownLatch release = new CountDownLatch(1);

  FirstSends(Map<Long, Integer> answers, Set<Long> held) {
    this.answers = Map.copyOf(answers);
    this.held = Set.copyOf(held);
  }

  @Override
  public ChaosSink.Action decide(ChaosSink.Delivery d) throws InterruptedException {
    Integer status = answers.get(d.messageId());
    if (status == null || d.attempt() != 1) {
      return ChaosSink.Action.ok();
    }
    arrived.add(d.messageId());
    if (held.contains(d.messageId()) && !release.await(5, TimeUnit.MINUTES)) {
      throw new IllegalStateException("A's send of " + d.key() + " was never released");
    }
    return ChaosSink.Action.status(status);
  }

  /** Jobs whose first send reached the sink (held or answered). */
  int arrived() {
    return arrived.size();
  }

  /** Answers the held sends. */
  void release() {
    release.countDown();
  }
}
