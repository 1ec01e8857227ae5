package dev.outboxrelay.relay.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import io.smallrye.config.WithParentName;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * docs/configuration.md, generated from the relay's {@link ConfigMapping} interfaces: every key
 * (SmallRye's names: kebab case, {@link WithName}, {@link WithParentName}, a map key as {@code
 * <name>}), its type, its {@link WithDefault} and its Javadoc, read by {@link JavadocIndex} from
 * the source file of each group (an interface of relay-service's own sources). The interfaces are
 * the one place a key is described; this file is derived.
 */
final class ConfigurationReference {
  static final Path DOC = RelayKeys.ROOT.resolve("docs/configuration.md");
  static final Path SOURCES = RelayKeys.ROOT.resolve("relay-service/src/main/java");
  static final String REGENERATE =
      "mvn -B -pl outbox-lib,relay-service -am test"
          + " -Dtest=ConfigurationReferenceTest -Dsurefire.failIfNoSpecifiedTests=false"
          + " -Dconfig.reference.write=true";
  static final String MAP_KEY = "<name>";

  /** One key: its full name ({@code <name>} for a map key), type, default and description. */
  record Key(String name, String type, String defaultValue, String description) {
    String row() {
      return "| `" + name + "` | " + type + " | " + defaultValue + " | " + cell(description) + " |";
    }
  }

  /** The keys of one group, under its prefix, with the group's description. */
  record Section(String prefix, String description, List<Key> keys) {}

  /** The Javadoc of each source file the groups are declared in, by top-level class. */
  private final Map<Class<?>, JavadocIndex> javadoc = new LinkedHashMap<>();

  private final List<Section> sections = new ArrayList<>();

  private ConfigurationReference() {}

  /** The {@code @ConfigMapping} interfaces of relay-service's sources, by class name. */
  static List<Class<?>> mappings() throws IOException {
    List<Class<?>> found = new ArrayList<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
        if (Files.readString(f).contains("@ConfigMapping(")) {
          String name =
              SOURCES.relativize(f).toString().replace('/', '.').replaceAll("\\.java$", "");
          try {
            found.add(Class.forName(name));
          } catch (ClassNotFoundException e) {
            throw new IllegalStateException(
                f + " declares a @ConfigMapping but " + name + " is not on the classpath", e);
          }
        }
      }
    }
    return found;
  }

  /** The sections of one mapping, groups in declaration order. */
  static List<Section> sections(Class<?> mapping) throws IOException {
    ConfigurationReference r = new ConfigurationReference();
    String prefix = mapping.getAnnotation(ConfigMapping.class).prefix();
    // The mapping's own Javadoc is about the interface; the file's header says what it needs.
    r.group(prefix, mapping, "");
    return r.sections;
  }

  /** Every key of every section. */
  static List<Key> keys(List<Section> sections) {
    return sections.stream().flatMap(s -> s.keys().stream()).toList();
  }

  private void group(String prefix, Class<?> type, String description) throws IOException {
    Section section = new Section(prefix, description, new ArrayList<>());
    int at = sections.size();
    sections.add(section);
    for (Method m : declaredProperties(type)) {
      String name =
          m.isAnnotationPresent(WithParentName.class)
              ? prefix
              : prefix
                  + "."
                  + (m.isAnnotationPresent(WithName.class)
                      ? m.getAnnotation(WithName.class).value()
                      : kebab(m.getName()));
      Type returned = m.getGenericReturnType();
      Class<?> raw = raw(returned);
      if (raw == Map.class) {
        Type value = ((ParameterizedType) returned).getActualTypeArguments()[1];
        String mapped = name + "." + MAP_KEY;
        if (isGroup(raw(value))) {
          group(mapped, raw(value), intro(m, raw(value)));
        } else {
          section.keys().add(leaf(mapped, value, m));
        }
      } else if (raw == Optional.class && isGroup(raw(argument(returned)))) {
        Class<?> inner = raw(argument(returned));
        group(name, inner, intro(m, inner));
      } else if (isGroup(raw)) {
        group(name, raw, intro(m, raw));
      } else {
        section.keys().add(leaf(name, returned, m));
      }
    }
    if (section.keys().isEmpty()) {
      sections.remove(at);
    }
  }

  /** A group's description: the Javadoc of the method that returns it, then its type's. */
  private String intro(Method m, Class<?> group) throws IOException {
    return Stream.of(doc(m), doc(group))
        .flatMap(Optional::stream)
        .distinct()
        .collect(Collectors.joining(" "));
  }

  private Key leaf(String name, Type type, Method m) throws IOException {
    WithDefault d = m.getAnnotation(WithDefault.class);
    boolean optional = isOptional(raw(type));
    String defaultValue = d != null ? "`" + d.value() + "`" : optional ? "(unset)" : "**required**";
    return new Key(name, typeName(type), defaultValue, doc(m).orElse(""));
  }

  /** The abstract, no-argument methods of a group interface, in source order. */
  private List<Method> declaredProperties(Class<?> type) throws IOException {
    String owner = nestedName(type);
    JavadocIndex source = javadoc(type);
    return Arrays.stream(type.getDeclaredMethods())
        .filter(m -> Modifier.isAbstract(m.getModifiers()) && m.getParameterCount() == 0)
        .sorted(
            Comparator.<Method>comparingInt(m -> source.order(owner, m.getName()))
                .thenComparing(Method::getName))
        .toList();
  }

  private Optional<String> doc(Method m) throws IOException {
    return javadoc(m.getDeclaringClass())
        .doc(nestedName(m.getDeclaringClass()) + "#" + m.getName());
  }

  private Optional<String> doc(Class<?> type) throws IOException {
    return javadoc(type).doc(nestedName(type));
  }

  /** The Javadoc of the source file declaring {@code type}. */
  private JavadocIndex javadoc(Class<?> type) throws IOException {
    Class<?> top = topLevel(type);
    JavadocIndex index = javadoc.get(top);
    if (index == null) {
      index = JavadocIndex.of(source(top));
      javadoc.put(top, index);
    }
    return index;
  }

  private static Class<?> topLevel(Class<?> type) {
    Class<?> t = type;
    while (t.getEnclosingClass() != null) {
      t = t.getEnclosingClass();
    }
    return t;
  }

  private static Path source(Class<?> topLevel) {
    return SOURCES.resolve(topLevel.getName().replace('.', '/') + ".java");
  }

  /** {@code RelayConfig.Destination} for a type nested in the mapping's source file. */
  private String nestedName(Class<?> type) {
    String name = type.getSimpleName();
    for (Class<?> t = type.getEnclosingClass(); t != null; t = t.getEnclosingClass()) {
      name = t.getSimpleName() + "." + name;
    }
    return name;
  }

  /** A group is an interface of relay-service's own sources; anything else is a value. */
  private static boolean isGroup(Class<?> type) {
    return type.isInterface() && Files.isRegularFile(source(topLevel(type)));
  }

  private static boolean isOptional(Class<?> raw) {
    return raw == Optional.class
        || raw == OptionalInt.class
        || raw == OptionalLong.class
        || raw == OptionalDouble.class;
  }

  /** The documented type of a leaf: its unit for durations, the choices of an enum. */
  static String typeName(Type type) {
    Class<?> raw = raw(type);
    if (raw == Optional.class) {
      return typeName(argument(type));
    }
    if (Collection.class.isAssignableFrom(raw)) {
      return "list of " + typeName(argument(type)) + " (comma-separated)";
    }
    if (raw == Duration.class) {
      return "duration";
    }
    if (raw == int.class
        || raw == Integer.class
        || raw == long.class
        || raw == Long.class
        || raw == OptionalInt.class
        || raw == OptionalLong.class) {
      return "integer";
    }
    if (raw == double.class
        || raw == Double.class
        || raw == float.class
        || raw == OptionalDouble.class) {
      return "decimal";
    }
    if (raw == boolean.class || raw == Boolean.class) {
      return "boolean";
    }
    if (raw == URI.class) {
      return "URI";
    }
    if (raw.isEnum()) {
      return "one of "
          + Arrays.stream(raw.getEnumConstants())
              .map(e -> "`" + e.toString().toLowerCase(Locale.ROOT).replace('_', '-') + "`")
              .collect(Collectors.joining(", "));
    }
    return raw == String.class ? "string" : raw.getSimpleName();
  }

  /** SmallRye's default (kebab-case) name of a method: {@code batchSize} is {@code batch-size}. */
  static String kebab(String method) {
    return method
        .replaceAll("([a-z0-9])([A-Z])", "$1-$2")
        .replaceAll("([A-Z])([A-Z][a-z])", "$1-$2")
        .toLowerCase(Locale.ROOT);
  }

  private static Class<?> raw(Type t) {
    return t instanceof ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) t;
  }

  private static Type argument(Type t) {
    return ((ParameterizedType) t).getActualTypeArguments()[0];
  }

  /** Text in a table cell: pipes escaped, angle brackets outside code spans as entities. */
  static String cell(String text) {
    StringBuilder out = new StringBuilder();
    String[] parts = text.replace("|", "\\|").split("`", -1);
    for (int i = 0; i < parts.length; i++) {
      if (i > 0) {
        out.append('`');
      }
      out.append(i % 2 == 0 ? parts[i].replace("<", "&lt;").replace(">", "&gt;") : parts[i]);
    }
    return out.toString();
  }

  /** The whole of docs/configuration.md for these mappings. */
  static String render(Map<Class<?>, List<Section>> mappings) {
    StringBuilder b = new StringBuilder();
    b.append("# Configuration reference\n\n")
        .append(
            "<!-- Generated from the @ConfigMapping interfaces of relay-service by"
                + " ConfigurationReferenceTest; do not edit. -->\n\n")
        .append(
            "Every key the relay reads under `outbox.*`, generated from its `@ConfigMapping`"
                + " interfaces (names, types, `@WithDefault` values, Javadoc). To change a description or a"
                + " default, edit the interface and regenerate this file:\n\n")
        .append("    ")
        .append(REGENERATE)
        .append("\n\n")
        .append(
            "- **Where to set a key**: `application.properties` (or `config/application.properties`"
                + " beside the jar), a system property (`-Doutbox.relay.batch-size=64`) or an environment"
                + " variable: the key in upper case with every character other than a letter or digit as"
                + " `_` (`OUTBOX_RELAY_BATCH_SIZE=64`, `OUTBOX_DESTINATIONS_BILLING_URL=...`).\n")
        .append(
            "- **`<name>`** is a name you choose (a destination's name); it is part of the key.\n")
        .append(
            "- **Durations**: a number with `ms`, `s`, `m`, `h` or `d` (`500ms`, `30s`, `5m`, `7d`),"
                + " or ISO-8601 (`PT30S`); a bare number is seconds.\n")
        .append(
            "- **Defaults**: `(unset)` means the key is optional and has no value unless set;"
                + " **required** means a group that exists (a destination) must set it.\n")
        .append(
            "- **Unknown keys**: an `outbox.*` key in a properties file or a system property that"
                + " matches no key here (a misspelling such as `outbox.relay.batch-sise`) fails start-up,"
                + " naming the key and where it was set (`SRCFG00050: outbox.relay.batch-sise in"
                + " SysPropConfigSource does not map to any root`). An environment variable cannot be"
                + " mapped back to one key (`_` stands for `.`, `-` and more), so a misspelt `OUTBOX_*`"
                + " variable does not stop the relay: it is ignored, and logged as a warning at start-up with"
                + " the nearest key (`did you mean OUTBOX_RELAY_BATCH_SIZE`).\n")
        .append(
            "- Keys outside `outbox.*` (datasources, Kafka, RabbitMQ, users, logging) are Quarkus'"
                + " own; docs/relay.md lists the ones the relay uses.\n");
    mappings.forEach(
        (mapping, sections) -> {
          for (Section s : sections) {
            b.append("\n## `").append(s.prefix()).append("`\n\n");
            if (!s.description().isEmpty()) {
              b.append(cell(s.description()).replace("\\|", "|")).append("\n\n");
            }
            b.append("| Key | Type | Default | Description |\n|---|---|---|---|\n");
            s.keys().forEach(k -> b.append(k.row()).append('\n'));
          }
        });
    return b.toString();
  }

  /** The keys named in the first column of a rendered file's tables, with their rows. */
  static Map<String, String> rows(String markdown) {
    Map<String, String> rows = new LinkedHashMap<>();
    Matcher m = Pattern.compile("(?m)^\\| `([^`]+)` \\|.*$").matcher(markdown);
    while (m.find()) {
      rows.put(m.group(1), m.group());
    }
    return rows;
  }
}
