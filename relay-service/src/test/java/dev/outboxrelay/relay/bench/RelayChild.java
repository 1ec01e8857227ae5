package dev.outboxrelay.relay.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code --role relay}: one relay in its own JVM, driven by the coordinator over stdin/stdout so
 * that start-up is not measured. Prints {@code READY} once assembled; then {@code GO} starts the
 * claim loop, {@code STATS} answers {@code STATS claims=.. received=.. heap_used_peak_mb=..
 * jit_cpu_s=..} (the JIT compilers' CPU so far, {@link HostStats#jitCpuSeconds}), {@code STOP}
 * stops the relay, writes every id the sink received (repeats included, one per line) to the ids
 * file and answers {@code STOPPED ...}.
 */
final class RelayChild {
  private RelayChild() {}

  static int run(BenchArgs args) throws Exception {
    RecordingSink sink = new RecordingSink();
    AtomicLong heapPeakBytes = new AtomicLong();
    Thread sampler =
        new Thread(
            () -> {
              var memory = java.lang.management.ManagementFactory.getMemoryMXBean();
              while (true) {
                heapPeakBytes.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                try {
                  Thread.sleep(50);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "bench-heap-sampler");
    sampler.setDaemon(true);
    sampler.start();
    try (InProcessRelay relay =
        new InProcessRelay(args.jdbcUrl().orElseThrow(), args.user().orElseThrow(), sink)) {
      System.out.println("READY");
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null) {
        switch (line.trim()) {
          case "GO" -> {
            relay.start();
            System.out.println("STARTED");
          }
          case "STATS" ->
              System.out.println(
                  "STATS claims="
                      + relay.claimStatements()
                      + " received="
                      + sink.distinct()
                      + " heap_used_peak_mb="
                      + heapPeakBytes.get() / (1024 * 1024)
                      + " jit_cpu_s="
                      + HostStats.jitCpuSeconds());
          case "STOP" -> {
            int released = relay.stop();
            List<String> ids = new ArrayList<>();
            sink.receipts().forEach(id -> ids.add(String.valueOf(id)));
            Files.write(args.idsFile().orElseThrow(), ids);
            System.out.println(
                "STOPPED released="
                    + released
                    + " claims="
                    + relay.claimStatements()
                    + " received="
                    + sink.distinct()
                    + " heap_used_peak_mb="
                    + heapPeakBytes.get() / (1024 * 1024)
                    + " stale="
                    + (long) relay.staleCompletions());
            return 0;
          }
          default -> System.err.println("relay child: unknown command '" + line + "'");
        }
      }
      // The coordinator went away: stop cleanly so nothing stays leased.
      relay.stop();
      return 1;
    } catch (IOException e) {
      System.err.println("relay child: " + e);
      return 1;
    }
  }
}
