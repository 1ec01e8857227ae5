package dev.outboxrelay.outbox.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class JobStateTest {
  @Test
  void theCodesAreTheStoredLettersInTheOrderOfTheStateMachine() {
    StringBuilder codes = new StringBuilder();
    for (JobState s : JobState.values()) {
      codes.append(s.code());
      assertEquals(s, JobState.fromCode(s.code()));
      assertTrue(s.is(s.code()));
    }
    assertEquals("RWSCD", codes.toString());
    assertEquals("R (ready), W (working), S (sent), C (confirmed), D (dead)", JobState.choices());
    assertEquals("D (dead)", JobState.DEAD.label());
  }

  @Test
  void parseReadsOneLetterInAnyCase() {
    assertEquals(JobState.SENT, JobState.parse(" s ", "state"));
    assertEquals(JobState.READY, JobState.parse("R", "state"));
  }

  @Test
  void parseRefusesAnythingElseNamingTheFieldAndTheStates() {
    for (String raw : new String[] {"X", "READY", "", " ", null}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> JobState.parse(raw, "state"));
      assertEquals("unknown state '" + raw + "': one of " + JobState.choices(), e.getMessage());
    }
    IllegalArgumentException longInput =
        assertThrows(
            IllegalArgumentException.class, () -> JobState.parse("x".repeat(100), "filter.state"));
    assertEquals(
        "unknown filter.state '" + "x".repeat(40) + "…': one of " + JobState.choices(),
        longInput.getMessage());
  }

  @Test
  void fromCodeRefusesAnUnknownLetter() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> JobState.fromCode('Q'));
    assertTrue(e.getMessage().startsWith("unknown job state code 'Q'"), e.getMessage());
  }
}
