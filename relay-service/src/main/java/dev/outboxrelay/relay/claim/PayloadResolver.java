package dev.outboxrelay.relay.claim;

import dev.outboxrelay.outbox.store.ClaimedJob;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.outbox.store.StoredPayload;
import dev.outboxrelay.relay.sink.SinkResult;
import java.util.Optional;

/**
 * The sink-side resolver of by-reference payloads: a claim carries only the reference of a body
 * stored out of band ({@code outbox_payload}), so that claims stay small; just before the send this
 * loads the body by id (one statement, outside any transaction), checks it against the size and
 * SHA-256 recorded at enqueue, and gives the sink the claim with the full body. Sinks never see a
 * reference, and the HTTP signature is computed over the real body.
 *
 * <p>A body that is missing or does not match its digest will not get better by waiting: the job
 * fails permanently ({@code D}) with a diagnosis. A database error while loading is a retry.
 * Thread-safe.
 */
public final class PayloadResolver {
  static final String MISSING = "PayloadMissing";
  static final String CORRUPT = "PayloadCorrupt";
  static final String LOAD_FAILED = "PayloadLoadFailed";

  /** Either the message to send ({@code failure} null) or why it cannot be sent. */
  public record Resolution(ClaimedJob message, SinkResult failure) {}

  private final OutboxStore store;

  public PayloadResolver(OutboxStore store) {
    this.store = store;
  }

  /** Returns an inline job as it is, a by-reference one with its verified body. */
  public Resolution resolve(ClaimedJob m) {
    if (!m.payloadByReference()) {
      return new Resolution(m, null);
    }
    Optional<StoredPayload> stored;
    try {
      stored = store.findPayload(m.id());
    } catch (RuntimeException e) {
      String cause = e.getCause() == null ? "" : ": " + e.getCause().getMessage();
      return new Resolution(
          null,
          new SinkResult.RetryLater(
              Optional.empty(),
              LOAD_FAILED,
              "loading the by-reference payload of message "
                  + m.id()
                  + " failed: "
                  + e.getMessage()
                  + cause,
              null));
    }
    if (stored.isEmpty()) {
      return new Resolution(
          null,
          new SinkResult.PermanentFailure(
              MISSING,
              "the by-reference payload of message "
                  + m.id()
                  + " is missing: no outbox_payload row"
                  + " (deleted or never written); the job holds only the reference '"
                  + m.payload()
                  + "' and was not sent",
              null));
    }
    String mismatch = stored.get().mismatch();
    if (mismatch != null) {
      return new Resolution(
          null,
          new SinkResult.PermanentFailure(
              CORRUPT,
              "the by-reference payload of message "
                  + m.id()
                  + " in outbox_payload is corrupt ("
                  + mismatch
                  + "); it was not sent",
              null));
    }
    return new Resolution(m.withPayload(stored.get().body()), null);
  }
}
