package dev.outboxrelay.relay.sink;

import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The start-up message for a destination that has settings but no type. Usually an environment
 * variable made it: {@code OUTBOX_DESTINATIONS_HOOK_HMAC_SECRET} set for a destination the relay
 * does not configure creates destination {@code hook} with a secret and nothing else. The message
 * names the variables, so the operator knows which one to remove or complete.
 */
final class UnconfiguredDestination {
  private UnconfiguredDestination() {}

  static String message(String name, Map<String, String> environment) {
    String key = "outbox.destinations." + name;
    String prefix =
        "OUTBOX_DESTINATIONS_"
            + name.replaceAll("[^A-Za-z0-9]", "_").toUpperCase(Locale.ROOT)
            + "_";
    TreeSet<String> variables = new TreeSet<>();
    environment.keySet().stream().filter(v -> v.startsWith(prefix)).forEach(variables::add);
    String base =
        key
            + ".type is required (http, kafka or rabbitmq): destination '"
            + name
            + "' has settings but no type";
    if (variables.isEmpty()) {
      return base + "; set " + key + ".type, or remove the destination's other keys";
    }
    return base
        + ", from the environment variable(s) "
        + String.join(", ", variables)
        + ". Remove "
        + (variables.size() == 1 ? "that variable" : "those variables")
        + " if the relay has no destination '"
        + name
        + "', or set "
        + prefix
        + "TYPE (and the destination's other keys)";
  }
}
