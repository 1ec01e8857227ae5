package dev.outboxrelay.relay.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md link to each other: every relative link
 * names a file that exists, and every {@code #anchor} into a Markdown file names one of its
 * headings (GitHub's slugs). Guards against the dead anchors a moved section leaves behind.
 */
class DocsLinksTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");

  @Test
  void everyRelativeLinkAndAnchorResolves() throws IOException {
    List<Path> files = documents();
    assertTrue(files.size() >= 5, "expected README, CONTRIBUTING and docs/*.md, found " + files);
    List<String> dead = new ArrayList<>();
    for (Path file : files) {
      Matcher m = LINK.matcher(withoutCodeBlocks(Files.readString(file)));
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("^(https?|mailto):.*")) {
          continue;
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? "" : target.substring(hash + 1);
        Path resolved = path.isEmpty() ? file : file.getParent().resolve(path).normalize();
        if (!Files.exists(resolved)) {
          dead.add(RelayKeys.ROOT.relativize(file) + ": no file " + target);
        } else if (!anchor.isEmpty()
            && resolved.toString().endsWith(".md")
            && !anchors(resolved).contains(anchor)) {
          dead.add(RelayKeys.ROOT.relativize(file) + ": no heading for " + target);
        }
      }
    }
    assertEquals(List.of(), dead, "dead links in the documentation");
  }

  @Test
  void slugsFollowGitHub() {
    assertEquals("performance-binbench", slug("Performance (`bin/bench`)"));
    assertEquals(
        "what-ids-headers-and-content-types-may-hold",
        slug("What IDs, headers and content types may hold"));
  }

  private static List<Path> documents() throws IOException {
    List<Path> files = new ArrayList<>();
    for (String top : List.of("README.md", "CONTRIBUTING.md", "CHANGELOG.md")) {
      Path p = RelayKeys.ROOT.resolve(top);
      if (Files.exists(p)) {
        files.add(p);
      }
    }
    try (Stream<Path> docs = Files.list(RelayKeys.ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
    }
    return files;
  }

  private static Set<String> anchors(Path markdown) throws IOException {
    Set<String> slugs = new HashSet<>();
    for (String line : withoutCodeBlocks(Files.readString(markdown)).split("\n")) {
      Matcher m = HEADING.matcher(line);
      if (m.matches()) {
        slugs.add(slug(m.group(1)));
      }
    }
    return slugs;
  }

  /** GitHub's heading anchor: lower case, punctuation dropped, spaces become hyphens. */
  static String slug(String heading) {
    return heading
        .strip()
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N}_\\- ]", "")
        .replace(' ', '-');
  }

  /** The text outside fenced code blocks (a {@code # comment} in a shell block is no heading). */
  private static String withoutCodeBlocks(String text) {
    StringBuilder out = new StringBuilder();
    boolean fence = false;
    for (String line : text.split("\n", -1)) {
      if (line.startsWith("```")) {
        fence = !fence;
        continue;
      }
      if (!fence) {
        out.append(line).append('\n');
      }
    }
    return out.toString();
  }
}
