package dev.outboxrelay.outbox.testing;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.spi.ToolProvider;

/**
 * The package cycles of a module's compiled classes, as {@code jdeps -verbose:package} reports the
 * dependencies between its packages (CONTRIBUTING.md "Package cycles"). A cycle is a strongly
 * connected component of more than one package, so a cycle through three packages is found as well
 * as a pair that depend on each other.
 */
public final class PackageCycles {
  private PackageCycles() {}

  /**
   * Every cycle among the packages under {@code prefix} in {@code classes} (a module's {@code
   * target/classes}), each as its sorted package names; empty when there is none.
   */
  public static List<SortedSet<String>> of(Path classes, String prefix) {
    return stronglyConnected(edges(classes, prefix)).stream().filter(c -> c.size() > 1).toList();
  }

  /**
   * Fails naming the packages of every cycle among the packages under {@code prefix} in the module
   * under test ({@code target/classes} of the directory the tests run in).
   */
  public static void assertNone(String prefix) {
    List<SortedSet<String>> cycles = of(Path.of("target", "classes"), prefix);
    if (!cycles.isEmpty()) {
      throw new AssertionError(describe(cycles));
    }
  }

  /** A failure message naming the packages of each cycle. */
  public static String describe(List<SortedSet<String>> cycles) {
    StringBuilder sb = new StringBuilder("package cycles (each line one strongly connected set):");
    cycles.forEach(c -> sb.append("\n  ").append(String.join(", ", c)));
    return sb.toString();
  }

  /** The dependencies between different packages under {@code prefix}, as jdeps reports them. */
  static Map<String, Set<String>> edges(Path classes, String prefix) {
    if (!Files.isDirectory(classes)) {
      throw new IllegalStateException(classes.toAbsolutePath() + " is not a directory of classes");
    }
    ToolProvider jdeps =
        ToolProvider.findFirst("jdeps")
            .orElseThrow(() -> new IllegalStateException("jdeps is not in this JDK"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int rc =
        jdeps.run(
            new PrintWriter(out),
            new PrintWriter(err),
            "-verbose:package",
            "--multi-release",
            "17",
            classes.toString());
    if (rc != 0) {
      throw new IllegalStateException("jdeps exited with " + rc + ": " + err + out);
    }
    Map<String, Set<String>> edges = new TreeMap<>();
    for (String line : out.toString().split("\\R")) {
      // "   dev.example.a        -> dev.example.b        classes" (or "not found")
      String[] f = line.trim().split("\\s+");
      if (f.length >= 3 && f[1].equals("->") && under(f[0], prefix) && under(f[2], prefix)) {
        edges.computeIfAbsent(f[0], k -> new TreeSet<>());
        if (!f[0].equals(f[2])) {
          edges.get(f[0]).add(f[2]);
        }
        edges.computeIfAbsent(f[2], k -> new TreeSet<>());
      }
    }
    if (edges.isEmpty()) {
      throw new IllegalStateException("jdeps reported no package under " + prefix + ": " + out);
    }
    return edges;
  }

  private static boolean under(String pkg, String prefix) {
    return pkg.equals(prefix) || pkg.startsWith(prefix + ".");
  }

  /** Tarjan's strongly connected components, iterative so that no depth overflows the stack. */
  private static List<SortedSet<String>> stronglyConnected(Map<String, Set<String>> edges) {
    Map<String, Integer> index = new HashMap<>();
    Map<String, Integer> low = new HashMap<>();
    Deque<String> stack = new ArrayDeque<>();
    Set<String> onStack = new TreeSet<>();
    List<SortedSet<String>> components = new ArrayList<>();
    for (String root : edges.keySet()) {
      if (index.containsKey(root)) {
        continue;
      }
      Deque<Map.Entry<String, List<String>>> work = new ArrayDeque<>();
      visit(root, index, low, stack, onStack, work, edges);
      while (!work.isEmpty()) {
        Map.Entry<String, List<String>> top = work.peek();
        String v = top.getKey();
        List<String> rest = top.getValue();
        if (!rest.isEmpty()) {
          String w = rest.remove(0);
          if (!index.containsKey(w)) {
            visit(w, index, low, stack, onStack, work, edges);
          } else if (onStack.contains(w)) {
            low.put(v, Math.min(low.get(v), index.get(w)));
          }
          continue;
        }
        work.pop();
        if (!work.isEmpty()) {
          String parent = work.peek().getKey();
          low.put(parent, Math.min(low.get(parent), low.get(v)));
        }
        if (low.get(v).equals(index.get(v))) {
          SortedSet<String> component = new TreeSet<>();
          String w;
          do {
            w = stack.pop();
            onStack.remove(w);
            component.add(w);
          } while (!w.equals(v));
          components.add(component);
        }
      }
    }
    return components;
  }

  private static void visit(
      String v,
      Map<String, Integer> index,
      Map<String, Integer> low,
      Deque<String> stack,
      Set<String> onStack,
      Deque<Map.Entry<String, List<String>>> work,
      Map<String, Set<String>> edges) {
    index.put(v, index.size());
    low.put(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    work.push(Map.entry(v, new ArrayList<>(edges.getOrDefault(v, Set.of()))));
  }
}
