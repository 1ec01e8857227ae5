package dev.outboxrelay.relay.claim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class BackoffTest {
  @Test
  void growsExponentiallyUpToTheCap() {
    Backoff b = new Backoff(Duration.ofSeconds(1), 2.0, Duration.ofSeconds(10), 0.0, () -> 0.5);
    assertEquals(Duration.ofSeconds(1), b.delay(1, Optional.empty()));
    assertEquals(Duration.ofSeconds(2), b.delay(2, Optional.empty()));
    assertEquals(Duration.ofSeconds(8), b.delay(4, Optional.empty()));
    assertEquals(Duration.ofSeconds(10), b.delay(5, Optional.empty()));
    assertEquals(Duration.ofSeconds(10), b.delay(60, Optional.empty()));
  }

  @Test
  void jitterStaysWithinItsBandAndUnderTheCap() {
    Backoff low = new Backoff(Duration.ofSeconds(1), 2.0, Duration.ofSeconds(10), 0.2, () -> 0.0);
    Backoff high = new Backoff(Duration.ofSeconds(1), 2.0, Duration.ofSeconds(10), 0.2, () -> 1.0);
    assertEquals(Duration.ofMillis(3200), low.delay(3, Optional.empty()));
    assertEquals(Duration.ofMillis(4800), high.delay(3, Optional.empty()));
    assertEquals(
        Duration.ofSeconds(10), high.delay(10, Optional.empty()), "jitter never exceeds the cap");
    assertTrue(high.upperBound(3).compareTo(high.delay(3, Optional.empty())) >= 0);
    assertEquals(Duration.ofMillis(3200), low.lowerBound(3), "the lowest draw of the jitter");
    assertEquals(Duration.ofMillis(8000), low.lowerBound(10), "the cap minus the jitter");
    for (int attempt = 1; attempt <= 12; attempt++) {
      assertTrue(low.lowerBound(attempt).compareTo(low.delay(attempt, Optional.empty())) <= 0);
      assertTrue(high.lowerBound(attempt).compareTo(high.delay(attempt, Optional.empty())) <= 0);
    }
  }

  @Test
  void sinkHintWins() {
    Backoff b = new Backoff(Duration.ofSeconds(1), 2.0, Duration.ofSeconds(10), 0.2, Math::random);
    assertEquals(Duration.ofSeconds(30), b.delay(1, Optional.of(Duration.ofSeconds(30))));
  }

  @Test
  void rejectsNonsenseNamingTheKey() {
    var e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new Backoff(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(10), 0.2, Math::random));
    assertTrue(e.getMessage().contains("outbox.relay.backoff.multiplier"), e.getMessage());
  }

  @Test
  void idleWaitDoublesToItsCapAndResets() {
    IdleWait w = new IdleWait(Duration.ofMillis(10), Duration.ofMillis(50));
    assertEquals(10, w.nextWait().toMillis());
    assertEquals(20, w.nextWait().toMillis());
    assertEquals(40, w.nextWait().toMillis());
    assertEquals(50, w.nextWait().toMillis());
    assertEquals(50, w.nextWait().toMillis());
    w.reset();
    assertEquals(10, w.nextWait().toMillis());
  }
}
