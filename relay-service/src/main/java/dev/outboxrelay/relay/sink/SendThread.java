package dev.outboxrelay.relay.sink;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The one thread a broker destination calls its client's blocking publish on, one message after the
 * other, so that a blocked client holds up only its own destination and never a relay worker; and
 * the one thread an HTTP destination's client runs its hand-offs on ({@link HttpSink}).
 */
final class SendThread {
  private SendThread() {}

  /** A daemon thread named {@code name}, started at the first task. */
  static ExecutorService named(String name) {
    return Executors.newSingleThreadExecutor(
        r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          return t;
        });
  }
}
