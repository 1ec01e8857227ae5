package dev.outboxrelay.relay.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.store.ClaimedMessage;
import dev.outboxrelay.relay.sink.MessageSink;
import dev.outboxrelay.relay.sink.SinkRegistry;
import dev.outboxrelay.relay.sink.SinkResult;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A destination's state follows its deliveries: DOWN after consecutive retries, UP at an answer. */
class DestinationStatesTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Deque<Object> script = new ArrayDeque<>();
  private final MessageSink scripted = m -> {
    Object next = script.removeFirst();
    if (next instanceof RuntimeException e) {
      throw e;
    }
    return (SinkResult) next;
  };

  private static ClaimedMessage message(String operationId) {
    return new ClaimedMessage(42, operationId, "billing", null, "{}", "application/json", Map.of(), 1,
        java.util.UUID.randomUUID(), java.time.Instant.now(), java.time.Instant.now().plusSeconds(30));
  }

  private double gauge(String destination) {
    return registry.get("outbox.destination.up").tag("destination", destination).gauge().value();
  }

  @Test
  void retriesInARowMakeItDownAndAnAnswerMakesItUp() throws Exception {
    DestinationStates states = new DestinationStates(List.of("billing", "quiet"), registry, Clock.systemUTC(),
        Duration.ofMinutes(1), 3);
    MessageSink sink = new SinkRegistry(Map.of("billing", scripted, "quiet", scripted)).observed(states)
        .forDestination("billing").orElseThrow();
    SinkResult.RetryLater refused = new SinkResult.RetryLater(Optional.empty(), "ConnectException",
        "connection refused", null);
    script.addAll(List.of(refused, refused, new IllegalStateException("boom"), new SinkResult.Delivered("200"),
        new SinkResult.PermanentFailure("HttpStatus", "422", "422")));
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
    assertTrue(states.of("billing").up());
    assertEquals(1.0, gauge("billing"));
    // A permanent refusal is an answer: the sink is reachable.
    sink.deliver(message("op-5"));
    assertTrue(states.of("billing").up());
  }

  @Test
  void refusesAThresholdBelowOne() {
    var e = assertThrows(IllegalArgumentException.class, () -> new DestinationStates(List.of("b"), registry,
        Clock.systemUTC(), Duration.ofMinutes(1), 0));
    assertTrue(e.getMessage().startsWith("outbox.relay.destination-down-after-failures must be at least 1"));
  }
}
