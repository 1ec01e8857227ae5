package dev.outboxrelay.relay.testing;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL server of a test's own, in a temporary directory on a free port, from the binaries
 * under {@code /usr/lib/postgresql/<version>/bin} (the newest; {@code -Dprivate.pg.bin=<dir>}
 * overrides): for experiments that stop the database, which must never be the machine's shared one.
 * Trust authentication on 127.0.0.1, user {@code postgres}, database {@code postgres}, no fsync (a
 * throw-away cluster). initdb refuses to run as root, so under root the server runs as the {@code
 * postgres} user ({@code runuser}).
 */
public final class PrivatePostgres implements AutoCloseable {
  private final Path bin;
  private final Path dir;
  private final int port;

  private PrivatePostgres(Path bin, Path dir, int port) {
    this.bin = bin;
    this.dir = dir;
    this.port = port;
  }

  /** initdb and start; fails with the tools' output when either fails. */
  public static PrivatePostgres start() throws IOException, InterruptedException {
    Path bin = binaries();
    Path dir = Files.createTempDirectory("private-pg-");
    if (root()) {
      UserPrincipal postgres =
          dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
      Files.setOwner(dir, postgres);
    }
    PrivatePostgres pg = new PrivatePostgres(bin, dir, ServiceProcess.freePort());
    pg.run(
        60, "initdb", "-D", pg.data(), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8");
    pg.startServer();
    return pg;
  }

  /** Starts the (stopped) server and waits until it accepts connections. */
  public void startServer() throws IOException, InterruptedException {
    run(
        60,
        "pg_ctl",
        "-D",
        data(),
        "-l",
        dir.resolve("server.log").toString(),
        "-w",
        "-t",
        "50",
        "-o",
        "-p "
            + port
            + " -k "
            + dir
            + " -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
        "start");
  }

  /**
   * Stops the server the hard way ({@code -m immediate}: no checkpoint, connections cut, as a
   * crash).
   */
  public void stopImmediately() throws IOException, InterruptedException {
    run(60, "pg_ctl", "-D", data(), "-m", "immediate", "-w", "stop");
  }

  public int port() {
    return port;
  }

  /** {@code jdbc:postgresql://127.0.0.1:<port>/postgres} */
  public String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  public DataSource dataSource() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(jdbcUrl());
    ds.setUser("postgres");
    return ds;
  }

  /** The server's log, for failure messages. */
  public String serverLog() throws IOException {
    Path log = dir.resolve("server.log");
    return Files.exists(log) ? Files.readString(log) : "";
  }

  /** Stops the server (fast) and deletes its directory. */
  @Override
  public void close() throws IOException, InterruptedException {
    try {
      run(60, "pg_ctl", "-D", data(), "-m", "fast", "-w", "stop");
    } catch (IllegalStateException e) {
      // already stopped
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    }
  }

  private String data() {
    return dir.resolve("data").toString();
  }

  private void run(int timeoutSeconds, String tool, String... args)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    if (root()) {
      cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    cmd.add(bin.resolve(tool).toString());
    cmd.addAll(Arrays.asList(args));
    Path out = Files.createTempFile("private-pg-" + tool, ".log");
    try {
      Process p =
          new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(
            cmd + " did not finish in " + timeoutSeconds + "s: " + Files.readString(out));
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            cmd + " failed (exit " + p.exitValue() + "): " + Files.readString(out));
      }
    } finally {
      Files.deleteIfExists(out);
    }
  }

  private static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  private static Path binaries() throws IOException {
    String override = System.getProperty("private.pg.bin");
    if (override != null && !override.isBlank()) {
      return Path.of(override);
    }
    Path base = Path.of("/usr/lib/postgresql");
    if (!Files.isDirectory(base)) {
      throw new IllegalStateException(
          "no PostgreSQL binaries under "
              + base
              + "; set -Dprivate.pg.bin=<dir with"
              + " initdb and pg_ctl>");
    }
    try (Stream<Path> versions = Files.list(base)) {
      return versions
          .filter(v -> Files.isExecutable(v.resolve("bin/pg_ctl")))
          .max(
              Comparator.comparingInt(
                  v -> Integer.parseInt(v.getFileName().toString().replaceAll("\\D", "0"))))
          .map(v -> v.resolve("bin"))
          .orElseThrow(
              () ->
                  new IllegalStateException(
                      "no PostgreSQL binaries under "
                          + base
                          + "/<version>/bin; set -Dprivate.pg.bin=<dir with initdb and pg_ctl>"));
    }
  }
}
