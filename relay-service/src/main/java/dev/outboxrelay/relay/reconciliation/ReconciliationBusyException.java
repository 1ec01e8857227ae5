package dev.outboxrelay.relay.reconciliation;

import java.time.Instant;

/** Another relay holds the reconciliation lease; answered 409. */
public class ReconciliationBusyException extends RuntimeException {
  private final String owner;
  private final Instant leaseUntil;

  public ReconciliationBusyException(String owner, Instant leaseUntil) {
    super("a reconciliation run is in progress on " + owner + " (lease until " + leaseUntil + "); try again later");
    this.owner = owner;
    this.leaseUntil = leaseUntil;
  }

  public String owner() {
    return owner;
  }

  public Instant leaseUntil() {
    return leaseUntil;
  }
}
