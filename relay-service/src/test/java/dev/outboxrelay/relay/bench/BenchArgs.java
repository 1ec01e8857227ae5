package dev.outboxrelay.relay.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The command line of {@link Bench}: {@code [--db postgresql|h2|mariadb] [--only <scenario>[,...]]
 * [--quick]} for a run, or {@code --role relay --jdbc-url <url> --user <user> --ids-file <file>}
 * for a relay child process that the coordinator starts itself.
 */
record BenchArgs(
    String db,
    Optional<List<String>> only,
    boolean quick,
    boolean relayRole,
    Optional<String> jdbcUrl,
    Optional<String> user,
    Optional<Path> idsFile) {

  static final List<String> DATABASES = List.of("postgresql", "h2", "mariadb");
  static final List<String> SCENARIOS =
      List.of(
          "sql-limit",
          "peer",
          "drain",
          "drain-http",
          "drain-kafka",
          "latency",
          "enqueue-overhead",
          "history",
          "ordered",
          "ordered-hot",
          "seed004",
          "idle");

  /** Thrown for a command line that cannot run; the message is meant for the user. */
  static final class UsageException extends IllegalArgumentException {
    UsageException(String message) {
      super(message);
    }
  }

  static BenchArgs parse(String... args) {
    String db = "postgresql";
    String only = null;
    boolean quick = false;
    String role = null;
    String url = null;
    String user = null;
    String ids = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "--quick" -> quick = true;
        case "--db" -> db = value(args, ++i, a);
        case "--only" -> only = value(args, ++i, a);
        case "--role" -> role = value(args, ++i, a);
        case "--jdbc-url" -> url = value(args, ++i, a);
        case "--user" -> user = value(args, ++i, a);
        case "--ids-file" -> ids = value(args, ++i, a);
        default ->
            throw new UsageException(
                "unknown argument '"
                    + a
                    + "'; usage: bin/bench"
                    + " [--db postgresql|h2|mariadb] [--only <scenario>[,<scenario>...]] [--quick]");
      }
    }
    if (!DATABASES.contains(db)) {
      throw new UsageException("--db must be one of " + DATABASES + ", was '" + db + "'");
    }
    List<String> onlyList = only == null ? null : List.of(only.split(",", -1));
    if (onlyList != null) {
      for (String name : onlyList) {
        if (!SCENARIOS.contains(name)) {
          throw new UsageException(
              "--only takes scenarios of "
                  + SCENARIOS
                  + " separated by commas, was '"
                  + only
                  + "'");
        }
      }
    }
    if (role != null && !role.equals("relay")) {
      throw new UsageException("--role must be 'relay', was '" + role + "'");
    }
    boolean relayRole = role != null;
    if (relayRole && (url == null || user == null || ids == null)) {
      throw new UsageException("--role relay needs --jdbc-url, --user and --ids-file");
    }
    if (!relayRole && (url != null || user != null || ids != null)) {
      throw new UsageException("--jdbc-url, --user and --ids-file belong to --role relay");
    }
    return new BenchArgs(
        db,
        Optional.ofNullable(onlyList),
        quick,
        relayRole,
        Optional.ofNullable(url),
        Optional.ofNullable(user),
        Optional.ofNullable(ids).map(Path::of));
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length || args[i].startsWith("--")) {
      throw new UsageException(flag + " needs a value");
    }
    return args[i];
  }

  /**
   * True when {@code scenario} runs in this invocation (in {@link #SCENARIOS}' order, whatever
   * --only's).
   */
  boolean runs(String scenario) {
    return only.map(names -> names.contains(scenario)).orElse(true);
  }
}
