package dev.outboxrelay.outbox.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class JobQueryTest {
  @Test
  void acceptsEveryJobStateAndAnyState() {
    for (JobState s : JobState.values()) {
      assertEquals(s.code(), new JobQuery(s.code(), null, null, 0, 1).state());
    }
    assertEquals(null, new JobQuery(null, null, null, 0, 1).state());
  }

  @Test
  void refusesAnUnknownStateNamingTheFieldAndTheStates() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new JobQuery('X', null, null, 0, 1));
    assertEquals("state must be one of " + JobState.choices() + ", was X", e.getMessage());
  }
}
