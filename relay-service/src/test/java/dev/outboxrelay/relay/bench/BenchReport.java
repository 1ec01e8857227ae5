package dev.outboxrelay.relay.bench;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Prints {@code BENCH <scenario> key=value ...} lines as they are measured and counts the targets.
 * A target is a goal reported on its line ({@code target=... target_met=true|false}), never a
 * failure: a run fails only when a scenario could not measure (an error, a lost or duplicated job).
 */
final class BenchReport {
  private final PrintStream out;
  private int scenarios;
  private int targets;
  private int targetsMet;
  private int failed;

  BenchReport(PrintStream out) {
    this.out = out;
  }

  /** A line under construction; {@link #print()} writes it. */
  final class Line {
    private final String scenario;
    private final Map<String, String> values = new LinkedHashMap<>();

    private Line(String scenario) {
      this.scenario = scenario;
    }

    Line put(String key, Object value) {
      values.put(key, format(value));
      return this;
    }

    /** Adds {@code target=<description> target_met=<met>} and counts it. */
    Line target(String description, boolean met) {
      values.put("target", description);
      values.put("target_met", String.valueOf(met));
      targets++;
      if (met) {
        targetsMet++;
      }
      return this;
    }

    void print() {
      StringBuilder b = new StringBuilder("BENCH ").append(scenario);
      values.forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
      out.println(b);
      out.flush();
    }
  }

  Line line(String scenario) {
    return new Line(scenario);
  }

  void scenarioRan() {
    scenarios++;
  }

  void scenarioFailed(String scenario, String reason) {
    failed++;
    line(scenario).put("FAILED", reason.replace(' ', '_')).print();
  }

  boolean anyFailed() {
    return failed > 0;
  }

  void summary(String db, boolean quick, double seconds) {
    line("SUMMARY")
        .put("scenarios", scenarios)
        .put("targets_met", targetsMet + "/" + targets)
        .put("failed", failed)
        .put("db", db)
        .put("quick", quick)
        .put("seconds", seconds)
        .print();
  }

  static String format(Object value) {
    if (value instanceof Double d) {
      if (d.isNaN() || d.isInfinite()) {
        return "n/a";
      }
      double abs = Math.abs(d);
      return String.format(Locale.ROOT, abs >= 100 ? "%.0f" : abs >= 10 ? "%.1f" : "%.2f", d);
    }
    return String.valueOf(value).replace(' ', '_');
  }
}
