package dev.outboxrelay.relay.source;

/** How many connections a source's pool needs: one per worker plus {@value #HEADROOM}. */
public final class PoolSize {
  /** Connections besides the workers': claim loop, heartbeats, reaper and gauges. */
  public static final int HEADROOM = 4;

  private PoolSize() {}

  /**
   * Every worker records its outcome on a connection while heartbeats, the claim loop and the
   * reaper need theirs: a pool smaller than that starves deliveries into acquisition timeouts.
   */
  public static void check(SourceSpec spec, int poolMaxSize) {
    check(spec.keyPrefix() + ".concurrency", spec.concurrency(), poolMaxSize, spec.datasource());
  }

  /** As {@link #check(SourceSpec, int)}, naming {@code concurrencyKey} in the error. */
  public static void check(String concurrencyKey, int concurrency, int poolMaxSize, String dsName) {
    if (concurrency + HEADROOM > poolMaxSize) {
      throw new IllegalArgumentException(
          concurrencyKey
              + "="
              + concurrency
              + " needs at least "
              + (concurrency + HEADROOM)
              + " connections, but quarkus.datasource."
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
    return concurrency + HEADROOM + 1 <= poolMaxSize;
  }
}
