package dev.outboxrelay.relay.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.relay.sink.MessageSink;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.sink.SinkResult;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A destination's state follows the failed share of its deliveries over a window, with hysteresis.
 */
class DestinationStatesTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private Instant now = Instant.parse("2026-01-01T00:00:00Z");
  private final Clock clock =
      new Clock() {
        @Override
        public java.time.ZoneId getZone() {
          return java.time.ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
          return this;
        }

        @Override
        public Instant instant() {
          return now;
        }
      };

  private void advance(Duration d) {
    now = now.plus(d);
  }

  private final Deque<Object> script = new ArrayDeque<>();
  private final MessageSink scripted =
      m -> {
        Object next = script.removeFirst();
        if (next instanceof RuntimeException e) {
          throw e;
        }
        return MessageSink.answered((SinkResult) next);
      };

  private static ClaimedJob message(String operationId) {
    return new ClaimedJob(
        42,
        operationId,
        "billing",
        null,
        "{}",
        "application/json",
        Map.of(),
        1,
        java.util.UUID.randomUUID(),
        java.time.Instant.now(),
        java.time.Instant.now().plusSeconds(30));
  }

  private double gauge(String destination) {
    return registry.get("outbox.destination.up").tag("destination", destination).gauge().value();
  }

  @Test
  void failuresMakeItDownAndSustainedAnswersMakeItUp() throws Exception {
    DestinationStates states =
        new DestinationStates(
            List.of("billing", "quiet"),
            registry,
            clock,
            Duration.ofMinutes(1),
            new DestinationStates.Hysteresis(Duration.ofSeconds(30), 3, 0.5, 0.1));
    MessageSink sink =
        new SinkRegistry(Map.of("billing", scripted, "quiet", scripted))
            .observed(states)
            .forDestination("billing")
            .orElseThrow();
    SinkResult.RetryLater refused =
        new SinkResult.RetryLater(Optional.empty(), "ConnectException", "connection refused", null);
    script.addAll(
        List.of(
            refused,
            refused,
            new IllegalStateException("boom"),
            new SinkResult.Delivered("200"),
            new SinkResult.Delivered("200")));
    sink.deliver(message("op-1"));
    sink.deliver(message("op-2"));
    assertTrue(states.of("billing").up(), "two failures are not yet an outage");
    assertEquals(1.0, gauge("billing"));
    assertThrows(IllegalStateException.class, () -> sink.deliver(message("op-3")));
    assertFalse(states.of("billing").up());
    assertEquals("java.lang.IllegalStateException: boom", states.of("billing").status().reason());
    assertEquals(0.0, gauge("billing"));
    assertEquals(1.0, gauge("quiet"), "the other destination is not affected");
    sink.deliver(message("op-4"));
    assertFalse(
        states.of("billing").up(), "one answer after three failures is not yet sustained success");
    advance(Duration.ofSeconds(31)); // the outage's failures leave the window
    sink.deliver(message("op-5"));
    assertTrue(states.of("billing").up());
    assertEquals(1.0, gauge("billing"));
    // A permanent refusal is an answer: the sink is reachable.
    script.add(new SinkResult.PermanentFailure("HttpStatus", "422", "422"));
    sink.deliver(message("op-6"));
    assertTrue(states.of("billing").up());
  }

  @Test
  void refusesSettingsOutOfRangeNamingTheKey() {
    var e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new DestinationStates.Hysteresis(Duration.ofSeconds(30), 0, 0.5, 0.1));
    assertTrue(
        e.getMessage()
            .startsWith("outbox.relay.destination-down-after-failures must be at least 1"));
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new DestinationStates.Hysteresis(Duration.ofSeconds(30), 3, 1.5, 0.1));
    assertTrue(
        e.getMessage().startsWith("outbox.relay.destination-down-failure-rate"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new DestinationStates.Hysteresis(Duration.ofSeconds(30), 3, 0.5, 0.5));
    assertTrue(
        e.getMessage().startsWith("outbox.relay.destination-up-failure-rate"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new DestinationStates.Hysteresis(Duration.ofMillis(5), 3, 0.5, 0.1));
    assertTrue(e.getMessage().startsWith("outbox.relay.destination-health-window"), e.getMessage());
  }

  /**
   * The flapping of the field report: 4% of deliveries retried among a steady stream, in bursts of
   * up to four in a row (concurrent sends failing together). With the old rule (DOWN after three in
   * a row, UP at the next answer) that flipped DOWN/UP many times; with the window it stays UP,
   * while a real outage still makes it DOWN within a few attempts and it is UP once answers are
   * sustained.
   */
  @Test
  void aFewPercentOfRetriesNeverFlapButAnOutageIsDownAndRecoveryIsUp() throws Exception {
    DestinationStates states =
        new DestinationStates(
            List.of("billing"),
            registry,
            clock,
            Duration.ofMinutes(1),
            new DestinationStates.Hysteresis(Duration.ofSeconds(10), 3, 0.5, 0.1));
    List<String> changes = new java.util.ArrayList<>();
    MessageSink sink =
        new SinkRegistry(Map.of("billing", scripted))
            .observed(states)
            .forDestination("billing")
            .orElseThrow();
    SinkResult.RetryLater retried =
        new SinkResult.RetryLater(Optional.empty(), "HTTP 503", "answered 503", null);
    java.util.Random random = new java.util.Random(14);
    boolean wasUp = true;
    // 90 s at 200 deliveries a second (after the first second, so the window is not nearly empty).
    for (int i = 0; i < 200; i++) {
      script.add(new SinkResult.Delivered("200"));
      sink.deliver(message("warm-" + i));
      advance(Duration.ofMillis(5));
    }
    for (int i = 0; i < 18_000; i++) {
      boolean burst = random.nextInt(100) == 0; // 1% of the time, four failures in a row
      script.add(burst ? retried : new SinkResult.Delivered("200"));
      sink.deliver(message("op-" + i));
      if (burst) {
        for (int k = 0; k < 3; k++) {
          script.add(retried);
          sink.deliver(message("op-" + i + "-" + k));
        }
      }
      if (states.of("billing").up() != wasUp) {
        wasUp = !wasUp;
        changes.add(i + (wasUp ? " UP" : " DOWN"));
      }
      advance(Duration.ofMillis(5));
    }
    assertEquals(List.of(), changes, "no flapping at about 4% retried deliveries");

    // The sink goes away: every delivery is retried. DOWN once failures are half the window.
    Instant outage = now;
    int failed = 0;
    while (states.of("billing").up()) {
      script.add(retried);
      sink.deliver(message("outage-" + failed++));
      advance(Duration.ofMillis(5));
    }
    Duration toDown = Duration.between(outage, now);
    assertTrue(
        toDown.compareTo(Duration.ofSeconds(11)) <= 0,
        "DOWN within the window (and a bucket): " + toDown);
    // Back: every delivery answered; UP only when the failed share is under 10%, not at the first
    // answer.
    Instant back = now;
    int answered = 0;
    while (!states.of("billing").up()) {
      script.add(new SinkResult.Delivered("200"));
      sink.deliver(message("back-" + answered++));
      advance(Duration.ofMillis(5));
    }
    assertTrue(answered > 100, "UP after sustained success: " + answered + " answers");
    assertTrue(
        Duration.between(back, now).compareTo(Duration.ofSeconds(11)) <= 0,
        "UP within the window (and a bucket)");
    assertEquals(1.0, gauge("billing"));
  }

  /**
   * Regression (SinkOutageChaosIT under the window rule): a sink back after an outage answered the
   * few remaining jobs, then no delivery came; the outage's failures kept the share above the UP
   * rate and nothing re-evaluated it, so readiness stayed 503 on a drained, healthy destination.
   */
  @Test
  void aRecoveredDestinationWithNoMoreDeliveriesIsUpOnceTheOutageAgesOut() throws Exception {
    DestinationStates states =
        new DestinationStates(
            List.of("billing"),
            registry,
            clock,
            Duration.ofMinutes(1),
            new DestinationStates.Hysteresis(Duration.ofSeconds(10), 3, 0.5, 0.1));
    MessageSink sink =
        new SinkRegistry(Map.of("billing", scripted))
            .observed(states)
            .forDestination("billing")
            .orElseThrow();
    SinkResult.RetryLater retried =
        new SinkResult.RetryLater(Optional.empty(), "HTTP 503", "answered 503", null);
    for (int i = 0; i < 20; i++) {
      script.add(retried);
      sink.deliver(message("outage-" + i));
      advance(Duration.ofMillis(100));
    }
    assertFalse(states.of("billing").up(), "DOWN during the outage");
    for (int i = 0; i < 3; i++) {
      script.add(new SinkResult.Delivered("200"));
      sink.deliver(message("back-" + i));
    }
    assertFalse(
        states.of("billing").up(),
        "three answers against twenty failures in the window: not yet UP");
    advance(Duration.ofSeconds(5));
    assertFalse(states.of("billing").up(), "half the window later the failed share is still high");
    advance(Duration.ofSeconds(6));
    assertTrue(
        states.of("billing").up(), "the outage aged out of the window after the last answer: UP");
    assertEquals(1.0, gauge("billing"));

    // A sink that failed last stays DOWN however long nothing happens.
    for (int i = 0; i < 5; i++) {
      script.add(retried);
      sink.deliver(message("again-" + i));
    }
    assertFalse(states.of("billing").up());
    advance(Duration.ofSeconds(30));
    assertFalse(states.of("billing").up(), "the last call failed: no evidence of recovery");
  }
}
