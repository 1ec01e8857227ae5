package dev.outboxrelay.relay;

import dev.outboxrelay.outbox.testing.PackageCycles;
import org.junit.jupiter.api.Test;

/** The relay's packages depend on each other without a cycle (CONTRIBUTING.md "Package cycles"). */
class PackageCyclesTest {
  @Test
  void noPackageCycleInTheRelay() {
    PackageCycles.assertNone("dev.outboxrelay.relay");
  }
}
