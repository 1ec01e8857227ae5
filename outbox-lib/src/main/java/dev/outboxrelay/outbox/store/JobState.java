package dev.outboxrelay.outbox.store;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The states of a job (docs/design.md "States"), each stored as its one-letter {@link #code()} in
 * {@code outbox_message.state}: ready, working (claimed under a lease), sent, confirmed by
 * reconciliation, dead.
 */
public enum JobState {
  READY('R', "ready"),
  WORKING('W', "working"),
  SENT('S', "sent"),
  CONFIRMED('C', "confirmed"),
  DEAD('D', "dead");

  /** Longest part of a refused input echoed back in the refusal. */
  private static final int MAX_ECHOED = 40;

  private static final String CHOICES =
      Arrays.stream(values()).map(JobState::label).collect(Collectors.joining(", "));

  private final char code;
  private final String word;

  JobState(char code, String word) {
    this.code = code;
    this.word = word;
  }

  /** The letter stored in the {@code state} column. */
  public char code() {
    return code;
  }

  /** The code with its meaning, e.g. {@code R (ready)}: what refusals and logs show. */
  public String label() {
    return code + " (" + word + ")";
  }

  /** Whether {@code code} (a stored row's state) is this state. */
  public boolean is(char code) {
    return this.code == code;
  }

  /** The state stored as {@code code}; an unknown code is refused. */
  public static JobState fromCode(char code) {
    for (JobState s : values()) {
      if (s.code == code) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown job state code '" + code + "': one of " + CHOICES);
  }

  /**
   * Reads a state given by a user (one letter, any case, surrounding blanks ignored); anything else
   * is refused with a message naming {@code field} and the states there are.
   */
  public static JobState parse(String raw, String field) {
    String s = raw == null ? "" : raw.trim().toUpperCase(Locale.ROOT);
    if (s.length() == 1) {
      for (JobState state : values()) {
        if (state.code == s.charAt(0)) {
          return state;
        }
      }
    }
    String echoed =
        raw == null || raw.length() <= MAX_ECHOED ? raw : raw.substring(0, MAX_ECHOED) + "…";
    throw new IllegalArgumentException("unknown " + field + " '" + echoed + "': one of " + CHOICES);
  }

  /** Every state's {@link #label()}, comma-separated, in the order of the state machine. */
  public static String choices() {
    return CHOICES;
  }
}
