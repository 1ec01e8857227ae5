package dev.outboxrelay.relay.bench;

import java.io.PrintStream;
import java.time.Duration;

/**
 * {@code bin/bench}'s main: runs the scenarios in the order of the benchmark issue and ends with
 * {@code BENCH SUMMARY scenarios=N targets_met=X/Y ...}. Exit 0 when every scenario measured
 * (missed targets are results), 1 when one failed (an error, a lost or duplicated job), 2 for a
 * command line or database it cannot run. {@code --role relay} is the relay child process.
 */
public final class Bench {
  /**
   * Sizes of one run: {@code --quick} for a smoke run of about a minute, else the issue's. {@code
   * warmupJobs}: the jobs of one unmeasured warm-up round; a JVM drains rounds before its first
   * measured drain until its JIT compilers are done (at most {@code maxWarmupRounds}), as every
   * throughput figure here is of warm code.
   */
  record Sizes(
      int sqlJobs,
      Duration sqlCap,
      int drainJobs,
      int warmupJobs,
      int maxWarmupRounds,
      Duration drainCap,
      Duration latencyRun,
      Duration enqueueRun,
      int historyRows,
      Duration idleWindow) {
    static final Sizes QUICK =
        new Sizes(
            5_000,
            Duration.ofSeconds(3),
            5_000,
            1_000,
            3,
            Duration.ofSeconds(60),
            Duration.ofSeconds(2),
            Duration.ofSeconds(2),
            50_000,
            Duration.ofSeconds(3));
    static final Sizes FULL =
        new Sizes(
            100_000,
            Duration.ofSeconds(15),
            100_000,
            20_000,
            30,
            Duration.ofSeconds(180),
            Duration.ofSeconds(10),
            Duration.ofSeconds(10),
            1_000_000,
            Duration.ofSeconds(20));
  }

  private Bench() {}

  public static void main(String[] args) throws Exception {
    System.exit(run(args, System.out));
  }

  static int run(String[] argv, PrintStream out) throws Exception {
    BenchArgs args;
    try {
      args = BenchArgs.parse(argv);
    } catch (BenchArgs.UsageException e) {
      System.err.println("bench: " + e.getMessage());
      return 2;
    }
    if (args.relayRole()) {
      return RelayChild.run(args);
    }
    long started = System.nanoTime();
    BenchDatabase db;
    try {
      db = BenchDatabase.open(args.db());
    } catch (BenchArgs.UsageException e) {
      System.err.println("bench: " + e.getMessage());
      return 2;
    }
    BenchReport report = new BenchReport(out);
    try (db) {
      Scenarios scenarios = new Scenarios(db, args.quick() ? Sizes.QUICK : Sizes.FULL, report);
      scenarios.header(args.quick());
      for (String name : BenchArgs.SCENARIOS) {
        if (!args.runs(name)) {
          continue;
        }
        try {
          scenarios.run(name);
          report.scenarioRan();
        } catch (Exception | AssertionError e) {
          System.err.println("bench: scenario " + name + " failed");
          e.printStackTrace();
          report.scenarioRan();
          report.scenarioFailed(name, String.valueOf(e.getMessage()));
        }
      }
      report.summary(args.db(), args.quick(), (System.nanoTime() - started) / 1e9);
    }
    return report.anyFailed() ? 1 : 0;
  }
}
