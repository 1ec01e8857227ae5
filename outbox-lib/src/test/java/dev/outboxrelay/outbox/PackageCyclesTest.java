package dev.outboxrelay.outbox;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.PackageCycles;
import java.nio.file.Path;
import java.util.List;
import java.util.SortedSet;
import org.junit.jupiter.api.Test;

/**
 * The library's packages depend on each other in layers, never in a cycle (the layers:
 * package-info.java of this package; CONTRIBUTING.md "Package cycles"): before this test the root
 * and {@code store}, {@code store.dialect}, {@code schema} and {@code jdbc} were one tangle.
 */
class PackageCyclesTest {
  @Test
  void noPackageCycleInTheLibrary() {
    List<SortedSet<String>> cycles =
        PackageCycles.of(Path.of("target", "classes"), "dev.outboxrelay.outbox");
    assertTrue(cycles.isEmpty(), () -> PackageCycles.describe(cycles));
  }
}
