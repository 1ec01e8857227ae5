package dev.outboxrelay.outbox.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class MessageQueryTest {
  @Test
  void acceptsEveryJobStateAndAnyState() {
    for (JobState s : JobState.values()) {
      assertEquals(s.code(), new MessageQuery(s.code(), null, null, 0, 1).state());
    }
    assertEquals(null, new MessageQuery(null, null, null, 0, 1).state());
  }

  @Test
  void refusesAnUnknownStateNamingTheFieldAndTheStates() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new MessageQuery('X', null, null, 0, 1));
    assertEquals("state must be one of " + JobState.choices() + ", was X", e.getMessage());
  }
}
