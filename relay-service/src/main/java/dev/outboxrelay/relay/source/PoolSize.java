package dev.outboxrelay.relay.source;

import dev.outboxrelay.relay.claim.ClaimLoop;

/**
 * How many connections a source's pool needs: one per worker thread ({@link
 * ClaimLoop#workerThreads}: one per place of {@code concurrency}, at most 16) plus {@value
 * #HEADROOM}. A send in flight holds no connection, so a large concurrency (for slow sinks) does
 * not need a large pool.
 */
public final class PoolSize {
  /** Connections besides the workers': claim loop, heartbeats, reaper and gauges. */
  public static final int HEADROOM = 4;

  private PoolSize() {}

  /** The connections a source of {@code concurrency} places needs at least. */
  public static int needed(int concurrency) {
    return ClaimLoop.workerThreads(concurrency) + HEADROOM;
  }

  /**
   * Every worker records its outcome on a connection while heartbeats, the claim loop and the
   * reaper need theirs: a pool smaller than that starves deliveries into acquisition timeouts.
   */
  public static void check(SourceSpec spec, int poolMaxSize) {
    check(spec.keyPrefix() + ".concurrency", spec.concurrency(), poolMaxSize, spec.datasource());
  }

  /** As {@link #check(SourceSpec, int)}, naming {@code concurrencyKey} in the error. */
  public static void check(String concurrencyKey, int concurrency, int poolMaxSize, String dsName) {
    if (needed(concurrency) > poolMaxSize) {
      throw new IllegalArgumentException(
          concurrencyKey
              + "="
              + concurrency
              + " needs at least "
              + needed(concurrency)
              + " connections ("
              + ClaimLoop.workerThreads(concurrency)
              + " worker threads + "
              + HEADROOM
              + "), but quarkus.datasource."
              + dsName
              + ".jdbc.max-size is "
              + poolMaxSize
              + ": raise the pool or lower the concurrency");
    }
  }

  /**
   * The PostgreSQL notification listener holds one more connection for good; it runs only when the
   * pool has that one on top of what {@link #check} demands (otherwise the relay polls).
   */
  public static boolean listenerFits(int concurrency, int poolMaxSize) {
    return needed(concurrency) + 1 <= poolMaxSize;
  }
}
