package dev.outboxrelay.relay;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.outboxrelay.outbox.testing.PackageCycles;
import java.nio.file.Path;
import java.util.List;
import java.util.SortedSet;
import org.junit.jupiter.api.Test;

/** The relay's packages depend on each other without a cycle (CONTRIBUTING.md "Package cycles"). */
class PackageCyclesTest {
  @Test
  void noPackageCycleInTheRelay() {
    List<SortedSet<String>> cycles =
        PackageCycles.of(Path.of("target", "classes"), "dev.outboxrelay.relay");
    assertTrue(cycles.isEmpty(), () -> PackageCycles.describe(cycles));
  }
}
