package dev.outboxrelay.relay.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/** Prints {@code CHAOS <name> FAILED <reason>} when an experiment fails, so bin/chaos counts it. */
public class ChaosReporter implements TestWatcher {
  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    String name =
        ChaosExperiment.current() == null ? context.getDisplayName() : ChaosExperiment.current();
    String reason = String.valueOf(cause.getMessage()).lines().findFirst().orElse("");
    try {
      ChaosExperiment.report("CHAOS " + name + " FAILED " + reason);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
