package dev.outboxrelay.relay.reconciliation;

import static dev.outboxrelay.relay.config.ConfigChecks.positive;

import dev.outboxrelay.relay.config.RelayConfig;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The validated reconciliation settings. Validation names the bad key; a relay with invalid
 * settings does not start.
 */
public record ReconciliationSettings(
    boolean enabled,
    Duration interval,
    Duration window,
    Duration gracePeriod,
    Duration lease,
    List<DestinationSettings> destinations) {

  /** Confirmation source types. */
  public static final String NONE = "none";

  public static final String HTTP_LEDGER = "http-ledger";
  public static final String TABLE = "table";
  static final List<String> SOURCE_TYPES = List.of(NONE, HTTP_LEDGER, TABLE);

  /** One reconciled destination (confirmation type other than {@code none}). */
  public record DestinationSettings(
      String name,
      String sourceType,
      Optional<URI> ledgerUrl,
      boolean redriveUnconfirmed,
      boolean acceptConfirmedNotSent,
      Duration connectTimeout,
      Duration requestTimeout) {}

  public static ReconciliationSettings fromConfig(RelayConfig config) {
    RelayConfig.Reconciliation r = config.reconciliation();
    List<DestinationSettings> reconciled = new ArrayList<>();
    for (Map.Entry<String, RelayConfig.Destination> e :
        new TreeMap<>(config.destinations()).entrySet()) {
      RelayConfig.Destination d = e.getValue();
      destination(
              e.getKey(),
              d.confirmation().type(),
              d.confirmation().url(),
              d.reconcile().redriveUnconfirmed(),
              d.reconcile().acceptConfirmedNotSent(),
              d.connectTimeout(),
              d.requestTimeout())
          .ifPresent(reconciled::add);
    }
    return of(r.enabled(), r.interval(), r.window(), r.gracePeriod(), r.lease(), reconciled);
  }

  /** Validates the global settings. */
  public static ReconciliationSettings of(
      boolean enabled,
      Duration interval,
      Duration window,
      Duration gracePeriod,
      Duration lease,
      List<DestinationSettings> destinations) {
    positive("outbox.reconciliation.interval", interval);
    positive("outbox.reconciliation.window", window);
    positive("outbox.reconciliation.lease", lease);
    if (gracePeriod.isNegative()) {
      throw new IllegalArgumentException(
          "outbox.reconciliation.grace-period must not be negative, was " + gracePeriod);
    }
    if (window.compareTo(interval) < 0) {
      throw new IllegalArgumentException(
          "outbox.reconciliation.window ("
              + window
              + ") must be at least"
              + " outbox.reconciliation.interval ("
              + interval
              + "), or jobs created between two windows are never"
              + " reconciled");
    }
    return new ReconciliationSettings(
        enabled, interval, window, gracePeriod, lease, List.copyOf(destinations));
  }

  /** Validates one destination's keys; empty when it is not reconciled ({@code none}). */
  public static Optional<DestinationSettings> destination(
      String name,
      String type,
      Optional<URI> url,
      boolean redrive,
      boolean accept,
      Duration connectTimeout,
      Duration requestTimeout) {
    String prefix = "outbox.destinations." + name + ".";
    String t = type == null ? "" : type.strip();
    if (!SOURCE_TYPES.contains(t)) {
      throw new IllegalArgumentException(
          prefix + "confirmation.type must be one of " + SOURCE_TYPES + ", was '" + type + "'");
    }
    if (t.equals(HTTP_LEDGER)) {
      URI u =
          url.orElseThrow(
              () ->
                  new IllegalArgumentException(
                      prefix
                          + "confirmation.url is required for"
                          + " confirmation.type="
                          + HTTP_LEDGER));
      if (!u.isAbsolute()
          || !("http".equals(u.getScheme()) || "https".equals(u.getScheme()))
          || u.getHost() == null) {
        throw new IllegalArgumentException(
            prefix + "confirmation.url must be an absolute http(s) URL, was '" + u + "'");
      }
    } else if (url.isPresent()) {
      throw new IllegalArgumentException(
          prefix
              + "confirmation.url is only read for confirmation.type="
              + HTTP_LEDGER
              + ", but the type is '"
              + t
              + "'");
    }
    if (t.equals(NONE)) {
      if (redrive || accept) {
        throw new IllegalArgumentException(
            prefix
                + (redrive
                    ? "reconcile.redrive-unconfirmed"
                    : "reconcile.accept-confirmed-not-sent")
                + "=true needs a confirmation source: set "
                + prefix
                + "confirmation.type to "
                + HTTP_LEDGER
                + " or "
                + TABLE);
      }
      return Optional.empty();
    }
    return Optional.of(
        new DestinationSettings(name, t, url, redrive, accept, connectTimeout, requestTimeout));
  }
}
