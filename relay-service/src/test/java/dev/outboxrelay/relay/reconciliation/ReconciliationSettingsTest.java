package dev.outboxrelay.relay.reconciliation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.relay.web.ProblemException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Start-up validation names the bad key; request parsing names the bad field; windows tile time.
 */
class ReconciliationSettingsTest {
  static final Duration S2 = Duration.ofSeconds(2);
  static final Optional<URI> LEDGER = Optional.of(URI.create("http://sink.internal/ledger"));

  @Test
  void aDestinationWithoutASourceIsNotReconciled() {
    assertTrue(
        ReconciliationSettings.destination(
                "billing", "none", Optional.empty(), false, false, S2, S2)
            .isEmpty());
    var d =
        ReconciliationSettings.destination("billing", "http-ledger", LEDGER, true, false, S2, S2)
            .orElseThrow();
    assertEquals("http-ledger", d.sourceType());
    assertTrue(d.redriveUnconfirmed());
    assertEquals(
        "table",
        ReconciliationSettings.destination(
                "billing", "table", Optional.empty(), false, true, S2, S2)
            .orElseThrow()
            .sourceType());
  }

  @Test
  void badDestinationKeysFailNamingTheKey() {
    assertMessage(
        "outbox.destinations.billing.confirmation.type must be one of [none, http-ledger, table], was 'ledger'",
        () ->
            ReconciliationSettings.destination("billing", "ledger", LEDGER, false, false, S2, S2));
    assertMessage(
        "outbox.destinations.billing.confirmation.url is required for confirmation.type=http-ledger",
        () ->
            ReconciliationSettings.destination(
                "billing", "http-ledger", Optional.empty(), false, false, S2, S2));
    assertMessage(
        "outbox.destinations.billing.confirmation.url must be an absolute http(s) URL, was 'ftp://x/ledger'",
        () ->
            ReconciliationSettings.destination(
                "billing",
                "http-ledger",
                Optional.of(URI.create("ftp://x/ledger")),
                false,
                false,
                S2,
                S2));
    assertMessage(
        "outbox.destinations.billing.confirmation.url is only read for confirmation.type=http-ledger, but"
            + " the type is 'table'",
        () -> ReconciliationSettings.destination("billing", "table", LEDGER, false, false, S2, S2));
    assertMessage(
        "outbox.destinations.billing.reconcile.redrive-unconfirmed=true needs a confirmation source: set"
            + " outbox.destinations.billing.confirmation.type to http-ledger or table",
        () ->
            ReconciliationSettings.destination(
                "billing", "none", Optional.empty(), true, false, S2, S2));
    assertMessage(
        "outbox.destinations.billing.reconcile.accept-confirmed-not-sent=true needs a confirmation source:"
            + " set outbox.destinations.billing.confirmation.type to http-ledger or table",
        () ->
            ReconciliationSettings.destination(
                "billing", "none", Optional.empty(), false, true, S2, S2));
  }

  @Test
  void badGlobalKeysFailNamingTheKey() {
    Duration m5 = Duration.ofMinutes(5);
    Duration h1 = Duration.ofHours(1);
    assertEquals(m5, ReconciliationSettings.of(true, m5, h1, m5, m5, List.of()).interval());
    assertMessage(
        "outbox.reconciliation.interval must be positive, was PT0S",
        () -> ReconciliationSettings.of(true, Duration.ZERO, h1, m5, m5, List.of()));
    assertMessage(
        "outbox.reconciliation.window must be positive, was PT-1H",
        () -> ReconciliationSettings.of(true, m5, h1.negated(), m5, m5, List.of()));
    assertMessage(
        "outbox.reconciliation.lease must be positive, was PT0S",
        () -> ReconciliationSettings.of(true, m5, h1, m5, Duration.ZERO, List.of()));
    assertMessage(
        "outbox.reconciliation.grace-period must not be negative, was PT-5M",
        () -> ReconciliationSettings.of(true, m5, h1, m5.negated(), m5, List.of()));
    assertMessage(
        "outbox.reconciliation.window (PT5M) must be at least outbox.reconciliation.interval (PT1H), or"
            + " jobs created between two windows are never reconciled",
        () -> ReconciliationSettings.of(true, h1, m5, m5, m5, List.of()));
  }

  @Test
  void scheduledWindowsEndOnMultiplesOfTheIntervalOnEveryRelay() {
    Duration five = Duration.ofMinutes(5);
    assertEquals(
        Instant.parse("2026-01-31T12:05:00Z"),
        ReconciliationService.slotEnd(Instant.parse("2026-01-31T12:09:59.999Z"), five));
    assertEquals(
        Instant.parse("2026-01-31T12:10:00Z"),
        ReconciliationService.slotEnd(Instant.parse("2026-01-31T12:10:00Z"), five));
    assertEquals(
        Instant.parse("2026-01-31T12:00:07Z"),
        ReconciliationService.slotEnd(
            Instant.parse("2026-01-31T12:00:07.4Z"), Duration.ofSeconds(1)));
  }

  @Test
  void theRunRequestBodyIsValidatedFieldByField() {
    Instant[] none = ReconciliationResource.parseWindow(JSON, " ");
    assertEquals(null, none[0]);
    assertEquals(null, none[1]);
    Instant[] w =
        ReconciliationResource.parseWindow(
            JSON,
            "{\"window_start\":\"2026-01-31T12:00:00Z\",\"window_end\":\"2026-01-31T13:00:00Z\"}");
    assertEquals(Instant.parse("2026-01-31T12:00:00Z"), w[0]);
    assertEquals(Instant.parse("2026-01-31T13:00:00Z"), w[1]);
    assertEquals(
        null,
        ReconciliationResource.parseWindow(JSON, "{\"window_end\":\"2026-01-31T13:00:00Z\"}")[0]);
    assertField("body", "{");
    assertField("body", "\"text\"");
    assertField("window_start", "{\"window_start\":\"31.01.2026\"}");
    assertField(
        "window_end",
        "{\"window_start\":\"2026-01-31T12:00:00Z\",\"window_end\":\"2026-01-31T12:00:00Z\"}");
    assertField("limit", "{\"limit\":5}");
    assertField("window_end", "{\"window_end\":\"+999999999-12-31T23:59:59Z\"}");
    assertField("window_start", "{\"window_start\":\"-999999999-01-01T00:00:00Z\"}");
    assertField("window_start", "{\"window_start\":\"0999-12-31T23:59:59Z\"}");
    assertField(
        "window_end",
        "{\"window_end\":\"2026-01-31T13:00:00Z\",\"window_end\":\"2026-01-31T14:00:00Z\"}");
    assertEquals(
        Instant.parse("9999-12-31T23:59:59Z"),
        ReconciliationResource.parseWindow(JSON, "{\"window_end\":\"9999-12-31T23:59:59Z\"}")[1]);
  }

  static final String JSON = "application/json";

  private static void assertField(String field, String body) {
    ProblemException e =
        assertThrows(ProblemException.class, () -> ReconciliationResource.parseWindow(JSON, body));
    assertEquals(field, e.field(), e.getMessage());
  }

  private static void assertMessage(
      String expected, org.junit.jupiter.api.function.Executable call) {
    assertEquals(expected, assertThrows(IllegalArgumentException.class, call).getMessage());
  }
}
