package dev.outboxrelay.demo;

import dev.outboxrelay.outbox.testing.ServiceProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.h2.tools.Server;

/**
 * An H2 server (TCP, on a free port) with its files under {@code <work>/db}, as bin/demo runs one:
 * the packaged demo-orders (built for H2) and the test reach the same database through it, and the
 * database outlives the processes the test kills.
 */
public final class DemoH2Server implements AutoCloseable {
  private final Server server;
  private final String url;

  private DemoH2Server(Server server, String url) {
    this.server = server;
    this.url = url;
  }

  /** Starts a server under {@code work} and names a database of its own, {@code <name>-<nanos>}. */
  public static DemoH2Server start(Path work, String name) throws IOException, SQLException {
    Files.createDirectories(work.resolve("db"));
    int port = ServiceProcess.freePort();
    Server server =
        Server.createTcpServer(
                "-tcp",
                "-tcpPort",
                String.valueOf(port),
                "-ifNotExists",
                "-baseDir",
                work.resolve("db").toString())
            .start();
    return new DemoH2Server(
        server, "jdbc:h2:tcp://localhost:" + port + "/" + name + "-" + System.nanoTime());
  }

  /**
   * The JDBC URL of the database, for {@code quarkus.datasource.jdbc.url} or the relay's
   * datasource.
   */
  public String url() {
    return url;
  }

  /** The database for the test's own reads. */
  public DataSource dataSource() {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(url);
    return ds;
  }

  @Override
  public void close() {
    server.stop();
  }
}
