package dev.outboxrelay.demo.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/receiving.md "Wiring 2: Kafka" and "Wiring 3: RabbitMQ" show the consumer and the channel
 * settings that BillingConsumersKafkaTest and BillingConsumersRabbitMqTest run: the Java block is
 * {@link BillingConsumers} from its {@code // docs:consumer} line on, and each properties block is
 * application.properties' {@code %kafka.} / {@code %rabbitmq.} lines without the prefix. Guards
 * against docs that show code no test exercises.
 */
class ReceivingDocsTest {
  private static final Path MODULE = Path.of("").toAbsolutePath();
  private static final String MARKER = "// docs:consumer\n";

  @Test
  void theJavaSnippetIsTheConsumerAsItRuns() throws IOException {
    String source =
        Files.readString(
            MODULE.resolve("src/main/java/dev/outboxrelay/demo/sink/BillingConsumers.java"));
    assertTrue(source.contains(MARKER), "BillingConsumers lost its " + MARKER.trim() + " line");
    String shown = source.substring(source.indexOf(MARKER) + MARKER.length()).strip();
    assertEquals(
        shown,
        blocks("java", section("## Wiring 2: Kafka")).get(0),
        "docs/receiving.md \"Wiring 2: Kafka\" differs from BillingConsumers: copy the class from its marker line on");
  }

  @Test
  void thePropertiesSnippetsAreTheChannelsAsTheyRun() throws IOException {
    assertEquals(
        profileLines("kafka"),
        blocks("properties", section("## Wiring 2: Kafka")).get(0),
        "docs/receiving.md \"Wiring 2: Kafka\" differs from application.properties' %kafka. lines");
    assertEquals(
        profileLines("rabbitmq"),
        blocks("properties", section("## Wiring 3: RabbitMQ")).get(0),
        "docs/receiving.md \"Wiring 3: RabbitMQ\" differs from application.properties' %rabbitmq. lines");
  }

  private static String profileLines(String profile) throws IOException {
    String prefix = "%" + profile + ".";
    List<String> lines =
        Files.readAllLines(MODULE.resolve("src/main/resources/application.properties")).stream()
            .filter(l -> l.startsWith(prefix))
            .map(l -> l.substring(prefix.length()))
            .toList();
    assertTrue(
        lines.size() >= 3, "application.properties has no channel under the profile " + profile);
    return String.join("\n", lines);
  }

  /** The text of the docs page from {@code heading} to the next heading of its level. */
  private static String section(String heading) throws IOException {
    String page = Files.readString(MODULE.resolveSibling("docs").resolve("receiving.md"));
    int start = page.indexOf(heading + "\n");
    assertTrue(start >= 0, "docs/receiving.md has no heading " + heading);
    int end = page.indexOf("\n## ", start + heading.length());
    return page.substring(start, end < 0 ? page.length() : end);
  }

  /** The fenced blocks of {@code language} in {@code text}, stripped. */
  private static List<String> blocks(String language, String text) {
    List<String> blocks = new ArrayList<>();
    String open = "```" + language + "\n";
    for (int i = text.indexOf(open); i >= 0; i = text.indexOf(open, i + 1)) {
      int from = i + open.length();
      blocks.add(text.substring(from, text.indexOf("```", from)).strip());
    }
    assertTrue(!blocks.isEmpty(), "no ```" + language + " block in\n" + text);
    return blocks;
  }
}
