package dev.outboxrelay.relay.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ChildRelayTest {

  /** The relay image's build file, from the module directory the tests run in. */
  static final Path DOCKERFILE =
      Path.of("..", "src-docker", "relay-service.Dockerfile").toAbsolutePath().normalize();

  @Test
  void theBenchsRelayProcessesRunWithTheImagesYoungGenerationBound() throws Exception {
    // The 3-relay drain's RSS figure is only the image's if its processes run with its flag.
    Matcher opts = Pattern.compile("JAVA_OPTS=\"([^\"]*)\"").matcher(Files.readString(DOCKERFILE));
    assertTrue(opts.find(), "relay-service.Dockerfile sets JAVA_OPTS");
    assertTrue(
        opts.group(1).contains(ChildRelay.YOUNG_GEN_FLAG),
        "the image's JAVA_OPTS hold the bench's "
            + ChildRelay.YOUNG_GEN_FLAG
            + ": "
            + opts.group(1));
  }
}
