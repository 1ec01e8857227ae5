package dev.outboxrelay.relay.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Javadoc of the types and no-argument methods of one Java source file, read from the source
 * (reflection cannot see Javadoc). Enough Java for configuration interfaces: comments, strings,
 * braces, type declarations and {@code name();} method declarations; nested types are named {@code
 * Outer.Inner}, methods {@code Outer.Inner#name}.
 */
final class JavadocIndex {
  private static final Pattern TYPE =
      Pattern.compile("\\b(?:interface|class|record|enum)\\s+(\\w+)");
  private static final Pattern METHOD = Pattern.compile("(\\w+)\\s*\\(\\s*\\)\\s*$");

  private final Map<String, String> docs = new HashMap<>();

  /** Method names per type in declaration order. */
  private final Map<String, List<String>> methods = new HashMap<>();

  private JavadocIndex() {}

  static JavadocIndex of(Path source) throws IOException {
    JavadocIndex index = new JavadocIndex();
    index.parse(Files.readString(source));
    return index;
  }

  /** The cleaned Javadoc of a type ({@code Outer.Inner}) or method ({@code Outer#name}). */
  Optional<String> doc(String element) {
    return Optional.ofNullable(docs.get(element));
  }

  /** The position of {@code method} among its type's declared methods (unknown ones last). */
  int order(String type, String method) {
    int i = methods.getOrDefault(type, List.of()).indexOf(method);
    return i < 0 ? Integer.MAX_VALUE : i;
  }

  private void parse(String src) {
    Deque<String> types = new ArrayDeque<>(); // innermost first; "" for a non-type block
    StringBuilder statement = new StringBuilder();
    String pendingDoc = null;
    int i = 0;
    while (i < src.length()) {
      char c = src.charAt(i);
      if (src.startsWith("/**", i) && !src.startsWith("/**/", i)) {
        int end = src.indexOf("*/", i + 3);
        pendingDoc = src.substring(i + 3, end);
        i = end + 2;
      } else if (src.startsWith("/*", i)) {
        i = src.indexOf("*/", i + 2) + 2;
      } else if (src.startsWith("//", i)) {
        int end = src.indexOf('\n', i);
        i = end < 0 ? src.length() : end;
      } else if (c == '"' || c == '\'') {
        int j = i + 1;
        while (src.charAt(j) != c) {
          j += src.charAt(j) == '\\' ? 2 : 1;
        }
        i = j + 1;
      } else if (c == '{') {
        Matcher type = TYPE.matcher(statement);
        String name = "";
        if (type.find()) {
          name = qualified(types, type.group(1));
          if (pendingDoc != null) {
            docs.put(name, clean(pendingDoc));
          }
        }
        types.push(name);
        statement.setLength(0);
        pendingDoc = null;
        i++;
      } else if (c == '}' || c == ';') {
        if (c == ';' && !types.isEmpty() && !types.peek().isEmpty()) {
          Matcher method = METHOD.matcher(statement.toString().strip());
          if (method.find()) {
            String type = types.peek();
            methods.computeIfAbsent(type, t -> new ArrayList<>()).add(method.group(1));
            if (pendingDoc != null) {
              docs.put(type + "#" + method.group(1), clean(pendingDoc));
            }
          }
        }
        if (c == '}' && !types.isEmpty()) {
          types.pop();
        }
        statement.setLength(0);
        pendingDoc = null;
        i++;
      } else {
        statement.append(c);
        i++;
      }
    }
  }

  private static String qualified(Deque<String> types, String simple) {
    for (String outer : types) { // innermost first
      if (!outer.isEmpty()) {
        return outer + "." + simple;
      }
    }
    return simple;
  }

  /**
   * Javadoc as one line of Markdown: leading asterisks and block tags dropped, {@code {@code x}} as
   * {@code `x`}, {@code {@link #name()}} as the key's last segment ({@code `kebab-name`}), other
   * links as their label, HTML paragraphs as spaces.
   */
  static String clean(String raw) {
    StringBuilder text = new StringBuilder();
    for (String line : raw.split("\n")) {
      String l = line.strip();
      if (l.startsWith("*")) {
        l = l.substring(1).strip();
      }
      if (l.startsWith("@")) {
        break; // @param, @see, ...: not part of the description
      }
      text.append(l).append(' ');
    }
    String s = text.toString();
    s =
        replace(
            s,
            Pattern.compile("\\{@link(?:plain)?\\s+#(\\w+)\\([^)]*\\)\\s*}"),
            m -> "`" + ConfigurationReference.kebab(m.group(1)) + "`");
    s =
        replace(
            s, Pattern.compile("\\{@link(?:plain)?\\s+[\\w.#()]*?\\s+([^}]+)}"), m -> m.group(1));
    s =
        replace(
            s,
            Pattern.compile("\\{@link(?:plain)?\\s+(?:[\\w.]*\\.)?([\\w#]+)(?:\\([^)]*\\))?\\s*}"),
            m -> "`" + m.group(1).replace('#', '.') + "`");
    s =
        replace(
            s,
            Pattern.compile("\\{@(?:code|literal)\\s+([^}]*)}"),
            m -> "`" + m.group(1).strip() + "`");
    s = s.replaceAll("</?p>", " ").replaceAll("\\s+", " ").strip();
    return s;
  }

  private static String replace(
      String s, Pattern p, java.util.function.Function<Matcher, String> f) {
    Matcher m = p.matcher(s);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(f.apply(m)));
    }
    m.appendTail(out);
    return out.toString();
  }
}
