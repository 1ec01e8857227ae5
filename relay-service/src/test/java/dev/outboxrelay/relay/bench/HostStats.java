package dev.outboxrelay.relay.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Memory and CPU figures from {@code /proc} (Linux) and the JVM; -1 where unavailable. */
final class HostStats {
  /** Clock ticks per second of /proc/<pid>/stat; 100 on every Linux this runs on. */
  private static final double CLK_TCK = 100.0;

  private HostStats() {}

  /** Peak resident set size (VmHWM) of process {@code pid}, in MiB. */
  static double peakRssMb(long pid) {
    return statusKb(pid, "VmHWM:") / 1024.0;
  }

  private static long statusKb(long pid, String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(pid), "status"))) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }

  /** CPU seconds (user + system) process {@code pid} has used so far. */
  static double cpuSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
      // The command name (field 2) may contain spaces: count fields after its closing paren.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / CLK_TCK;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * CPU seconds (user + system) the live threads of this process whose name starts with {@code
   * prefix} have used so far (Linux keeps the first 15 characters of a thread's name). A thread
   * that ended took its figure with it.
   */
  static double threadCpuSeconds(String prefix) {
    String shortPrefix = prefix.length() > 15 ? prefix.substring(0, 15) : prefix;
    long ticks = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
      for (Path task : tasks) {
        try {
          if (Files.readString(task.resolve("comm")).startsWith(shortPrefix)) {
            String stat = Files.readString(task.resolve("stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
          }
        } catch (IOException ended) {
          // The thread ended while being read.
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return ticks / CLK_TCK;
  }

  /** Busy CPU seconds of the whole host so far (every core, every process: the database too). */
  static double hostBusySeconds() {
    try {
      List<String> lines = Files.readAllLines(Path.of("/proc/stat"));
      String[] f = lines.get(0).trim().split("\\s+");
      long busy = 0;
      for (int i = 1; i < f.length && i <= 8; i++) {
        if (i != 4 && i != 5) {
          busy += Long.parseLong(f[i]); // all but idle and iowait
        }
      }
      return busy / CLK_TCK;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /**
   * CPU seconds this JVM's JIT compiler threads (HotSpot's {@code C1/C2 CompilerThread}s) have used
   * so far: how much of a process's CPU is still compiling rather than running its code.
   */
  static double jitCpuSeconds() {
    return threadCpuSeconds("C1 CompilerThread") + threadCpuSeconds("C2 CompilerThread");
  }

  /** Heap in use in this JVM now, in MiB. */
  static double heapUsedMb() {
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
  }
}
