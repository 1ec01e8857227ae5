package dev.outboxrelay.relay.config;

import io.quarkus.runtime.StartupEvent;
import io.smallrye.config.ConfigMappings;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/**
 * Warns about {@code OUTBOX_*} environment variables that are no key of the relay. A misspelt
 * {@code outbox.*} key in a properties file or a system property fails start-up (SmallRye Config
 * reports it: {@code SRCFG00050: outbox.relay.batch-sise in ... does not map to any root}), but an
 * environment variable cannot be mapped back to one key ({@code _} stands for {@code .}, {@code -}
 * and any other character), so SmallRye ignores a misspelt one silently. This check holds each
 * {@code OUTBOX_*} name against the environment form of every {@link RelayConfig} key and logs the
 * ones matching none, with the nearest key. It warns rather than fails: a variable starting with
 * {@code OUTBOX_} may belong to something else in the environment (compose's {@code
 * OUTBOX_DB_PASSWORD}).
 */
@ApplicationScoped
public class UnknownVariableCheck {
  private static final Logger LOG = Logger.getLogger(UnknownVariableCheck.class);
  static final String PREFIX = "OUTBOX_";

  void onStart(@Observes StartupEvent event) {
    for (String warning : check(System.getenv())) {
      LOG.warn(warning);
    }
  }

  /** One warning per {@code OUTBOX_*} variable of {@code environment} that is no relay key. */
  public static List<String> check(Map<String, String> environment) {
    List<Key> keys = keys();
    List<String> warnings = new ArrayList<>();
    for (String name : new TreeSet<>(environment.keySet())) {
      if (!name.startsWith(PREFIX)
          || keys.stream().anyMatch(k -> k.pattern().matcher(name).matches())) {
        continue;
      }
      Key nearest = null;
      int best = Integer.MAX_VALUE;
      for (Key k : keys) {
        int d = k.distance(name);
        if (d < best) {
          best = d;
          nearest = k;
        }
      }
      warnings.add(
          "environment variable "
              + name
              + " is no key of the relay and is ignored"
              + (nearest != null && best <= Math.max(2, name.length() / 5)
                  ? "; did you mean "
                      + nearest.envForm()
                      + " ("
                      + nearest.key().replace("*", "<name>")
                      + ")?"
                  : "")
              + " (keys: docs/configuration.md)");
    }
    return warnings;
  }

  /**
   * A key of {@link RelayConfig} ({@code *} for a map key, e.g. a destination's name), as an
   * environment name pattern.
   */
  record Key(String key, List<String> parts, Pattern pattern) {
    static Key of(String key) {
      List<String> parts =
          Arrays.stream(key.split("\\*", -1)).map(UnknownVariableCheck::envName).toList();
      StringBuilder regex = new StringBuilder();
      for (String part : parts) {
        if (regex.length() > 0) {
          regex.append("[A-Z0-9]+(?:_[A-Z0-9]+)*");
        }
        regex.append(Pattern.quote(part));
      }
      return new Key(key, parts, Pattern.compile(regex.toString()));
    }

    /** The environment form, with {@code <NAME>} for a map key. */
    String envForm() {
      return String.join("<NAME>", parts);
    }

    /**
     * Edit distance from {@code name}; a map key takes whatever non-empty run of {@code name} fits
     * best (one map key at most is tried, as in {@code outbox.destinations.*.type}).
     */
    int distance(String name) {
      if (parts.size() == 1) {
        return levenshtein(name, parts.get(0));
      }
      if (parts.size() != 2 || !name.startsWith(parts.get(0))) {
        return Integer.MAX_VALUE;
      }
      String rest = name.substring(parts.get(0).length());
      int best = Integer.MAX_VALUE;
      for (int cut = 1; cut <= rest.length(); cut++) {
        best = Math.min(best, levenshtein(rest.substring(cut), parts.get(1)));
      }
      return best;
    }
  }

  private static List<Key> keys() {
    Set<String> names =
        ConfigMappings.getProperties(ConfigMappings.ConfigClass.configClass(RelayConfig.class))
            .keySet();
    return names.stream().sorted().map(Key::of).toList();
  }

  /**
   * SmallRye's environment form of a key: {@code outbox.relay.batch-size} is {@code
   * OUTBOX_RELAY_BATCH_SIZE}.
   */
  static String envName(String key) {
    return key.replaceAll("[^A-Za-z0-9]", "_").toUpperCase(Locale.ROOT);
  }

  static int levenshtein(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
