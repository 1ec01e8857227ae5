package dev.outboxrelay.relay.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Misspelt OUTBOX_* variables are named with the nearest key; known ones and others pass. */
class UnknownVariableCheckTest {

  @Test
  void namesAMisspeltVariableWithTheNearestKey() {
    assertEquals(
        List.of(
            "environment variable OUTBOX_RELAY_BATCH_SISE is no key of the relay and is"
                + " ignored; did you mean OUTBOX_RELAY_BATCH_SIZE (outbox.relay.batch-size)? (keys:"
                + " docs/configuration.md)"),
        UnknownVariableCheck.check(Map.of("OUTBOX_RELAY_BATCH_SISE", "5")));
  }

  @Test
  void suggestsTheKeyUnderAMapWithTheGivenName() {
    assertEquals(
        List.of(
            "environment variable OUTBOX_DESTINATIONS_BILLING_TPYE is no key of the relay"
                + " and is ignored; did you mean OUTBOX_DESTINATIONS_<NAME>_TYPE (outbox.destinations.<name>.type)?"
                + " (keys: docs/configuration.md)"),
        UnknownVariableCheck.check(Map.of("OUTBOX_DESTINATIONS_BILLING_TPYE", "http")));
  }

  @Test
  void knownKeysMapKeysAndOtherVariablesPass() {
    assertEquals(
        List.of(),
        UnknownVariableCheck.check(
            Map.of(
                "OUTBOX_RELAY_BATCH_SIZE", "5",
                "OUTBOX_DESTINATIONS_BILLING_TYPE", "http",
                "OUTBOX_DESTINATIONS_ORDER_EVENTS_CONFIRMATION_URL", "http://x",
                "OUTBOX_RETENTION_MAX_PER_PASS", "10",
                "PATH", "/bin",
                "QUARKUS_HTTP_PORT", "1")));
  }

  @Test
  void farFromEveryKeyIsNamedWithoutAGuess() {
    assertEquals(
        List.of(
            "environment variable OUTBOX_DB_PASSWORD is no key of the relay and is"
                + " ignored (keys: docs/configuration.md)"),
        UnknownVariableCheck.check(Map.of("OUTBOX_DB_PASSWORD", "x")));
  }
}
