package dev.outboxrelay.relay.source;

import java.io.IOException;
import java.net.InetAddress;
import java.util.UUID;

/** How this relay process names itself: {@code host/pid/random}. */
public final class RelayInstance {
  /**
   * This process's name on the attempts it records ({@code outbox_attempt.relay_instance}): one for
   * the process's life, so every attempt it makes, on every source, names the same relay.
   */
  public static final String NAME = newName();

  private RelayInstance() {}

  /** A name for fleet leases and run records: {@code host/pid/random}, new at each call. */
  public static String newName() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "unknown-host";
    }
    return host
        + "/"
        + ProcessHandle.current().pid()
        + "/"
        + UUID.randomUUID().toString().substring(0, 8);
  }
}
