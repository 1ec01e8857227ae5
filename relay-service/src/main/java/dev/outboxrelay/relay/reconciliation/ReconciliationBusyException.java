package dev.outboxrelay.relay.reconciliation;

import dev.outboxrelay.relay.web.ProblemException;
import jakarta.ws.rs.core.Response.Status;
import java.time.Instant;

/** Another relay holds the reconciliation lease; answered 409 (a problem naming the holder). */
public class ReconciliationBusyException extends ProblemException {
  private final String owner;
  private final Instant leaseUntil;

  public ReconciliationBusyException(String owner, Instant leaseUntil) {
    super(
        Status.CONFLICT,
        null,
        "a reconciliation run is in progress on "
            + owner
            + " (lease until "
            + leaseUntil
            + "); try again later");
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
