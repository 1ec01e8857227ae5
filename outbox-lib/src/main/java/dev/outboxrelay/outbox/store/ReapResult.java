package dev.outboxrelay.outbox.store;

/**
 * @param returnedToReady expired leases put back to {@code R}
 * @param dead expired leases whose attempts reached the maximum, now {@code D}
 */
public record ReapResult(int returnedToReady, int dead) {
  public int total() {
    return returnedToReady + dead;
  }
}
