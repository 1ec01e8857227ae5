package dev.outboxrelay.outbox;

import dev.outboxrelay.outbox.testing.PackageCycles;
import org.junit.jupiter.api.Test;

/**
 * The library's packages depend on each other in layers, never in a cycle (the layers:
 * package-info.java of this package; CONTRIBUTING.md "Package cycles"): before this test the root
 * and {@code store}, {@code store.dialect}, {@code schema} and {@code jdbc} were one tangle.
 */
class PackageCyclesTest {
  @Test
  void noPackageCycleInTheLibrary() {
    PackageCycles.assertNone("dev.outboxrelay.outbox");
  }
}
