package dev.outboxrelay.relay.testing;

import static io.restassured.RestAssured.given;

import dev.outboxrelay.outbox.Outbox;
import dev.outboxrelay.outbox.OutboxConfig;
import dev.outboxrelay.outbox.OutboxMessage;
import dev.outboxrelay.outbox.store.OutboxAdminStore;
import dev.outboxrelay.outbox.store.OutboxStore;
import dev.outboxrelay.relay.lifecycle.RelayService;
import io.agroal.api.AgroalDataSource;
import io.quarkus.agroal.DataSource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the browser tests of the relay's pages (the console, the reconciliation page) share: the
 * running relay on PostgreSQL with its HTTP receiver, an empty outbox before each test, one
 * destination, and how a test user opens a page or calls the API. Subclasses are Quarkus tests with
 * {@link RelayTestResources}.
 */
public abstract class BrowserPageTest {
  protected static final Duration WAIT = Duration.ofSeconds(30);
  protected static final String DEST = "ledgered";

  /** Where the tests save their screenshots (the ones docs/ shows). */
  protected static final Path SCREENSHOTS = Path.of("target", "screenshots");

  @Inject
  @DataSource("postgresql")
  protected AgroalDataSource ds;

  @Inject protected RelayService relay;

  @TestHTTPResource("/")
  protected URL base;

  protected RecordingHttpReceiver receiver;
  protected OutboxStore store;
  protected OutboxAdminStore admin;
  protected final Outbox outbox = new Outbox(OutboxConfig.builder().destinations(DEST).build());

  /** Children before parents: every row a page could show, none left by an earlier test. */
  private static final List<String> TABLES =
      List.of(
          "outbox_reconciliation_item",
          "outbox_reconciliation_run",
          "outbox_confirmation",
          "outbox_lock",
          "outbox_attempt",
          "outbox_payload",
          "outbox_message");

  @BeforeEach
  void emptyOutbox() throws SQLException {
    (receiver = RelayTestResources.receiver).reset();
    store = relay.store();
    admin = relay.admin();
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      for (String table : TABLES) {
        s.execute("DELETE FROM " + table);
      }
    }
  }

  /** The address of {@code path} (with its query) on the relay, logged in as {@code user}. */
  protected String page(String user, String path) {
    return "http://" + user + ":" + user + "-pw@" + base.getHost() + ":" + base.getPort() + path;
  }

  /** Opens {@code path} as {@code user} and waits until the page says it has loaded. */
  protected void open(Browser browser, String user, String path) {
    browser.navigate(page(user, path));
    browser.await("the loaded page", "document.body.dataset.loaded === 'true'", WAIT);
  }

  /**
   * A request of the test user {@code user} (viewer, operator, nobody; password {@code <user>-pw}).
   */
  protected static RequestSpecification as(String user) {
    return given().auth().preemptive().basic(user, user + "-pw");
  }

  protected void enqueue(Outbox box, OutboxMessage.Builder message) throws SQLException {
    try (Connection c = ds.getConnection()) {
      box.enqueue(c, message.build());
    }
  }

  protected char state(String operationId) {
    return admin.findByOperationId(operationId).orElseThrow().state();
  }

  protected long id(String operationId) {
    return admin.findByOperationId(operationId).orElseThrow().id();
  }
}
