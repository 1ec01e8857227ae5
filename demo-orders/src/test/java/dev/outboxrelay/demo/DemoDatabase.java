package dev.outboxrelay.demo;

import dev.outboxrelay.demo.jdbc.Jdbc;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import javax.sql.DataSource;

/** Test access to the shared in-memory database: counts, outbox rows and a reset. */
@ApplicationScoped
public class DemoDatabase {
  private static final String[] TABLES = {
    "demo_invoice", "outbox_inbox", "orders", "outbox_attempt", "outbox_message"
  };

  @Inject DataSource dataSource;
  @Inject Jdbc jdbc;

  private JdbcOutboxAdminStore outboxStore;

  /** The outbox's counts and jobs over the application's datasource (created once). */
  public synchronized JdbcOutboxAdminStore outbox() {
    if (outboxStore == null) {
      outboxStore = JdbcOutboxAdminStore.create(dataSource);
    }
    return outboxStore;
  }

  /** Deletes every order, outbox job, ledger row and invoice. */
  public void reset() {
    for (String table : TABLES) {
      jdbc.update("DELETE FROM " + table);
    }
  }

  /** Plain JDBC on the application's datasource, for setting up unusual rows. */
  public Jdbc jdbc() {
    return jdbc;
  }

  public long orders() {
    return jdbc.queryLong("SELECT COUNT(*) FROM orders");
  }

  /** Outbox jobs in any state. */
  public long outboxJobs() {
    return outbox().countByState().values().stream().mapToLong(Long::longValue).sum();
  }

  public long invoices(String operationId) {
    return jdbc.queryLong("SELECT COUNT(*) FROM demo_invoice WHERE operation_id = ?", operationId);
  }
}
