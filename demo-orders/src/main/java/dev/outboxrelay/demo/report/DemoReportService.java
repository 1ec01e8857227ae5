package dev.outboxrelay.demo.report;

import static dev.outboxrelay.demo.order.Order.BILLING_OPERATION_PREFIX;
import static dev.outboxrelay.demo.order.Order.BILLING_OPERATION_SUFFIX;

import dev.outboxrelay.demo.jdbc.Jdbc;
import dev.outboxrelay.demo.order.Order;
import dev.outboxrelay.demo.sink.Invoices;
import dev.outboxrelay.outbox.inbox.InboxLedger;
import dev.outboxrelay.outbox.orm.TransactionalOutbox;
import dev.outboxrelay.outbox.store.JdbcOutboxAdminStore;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Builds the {@link DemoReport}. Each figure is read on its own (no snapshot across them), so while
 * the relay is running the figures may disagree by the deliveries in flight.
 *
 * <p>Not to be called inside a JTA transaction: {@link JdbcOutboxAdminStore}'s inspection methods
 * switch their connection to auto-commit, which Agroal refuses on an enlisted connection.
 */
@ApplicationScoped
public class DemoReportService {
  /** How many lost operation IDs the report lists. */
  public static final int LOST_SAMPLE = 20;

  private static final String COUNT_ORDERS = "SELECT COUNT(*) FROM orders";
  // The operation ID is rebuilt from the order id; parameters: Order's prefix and suffix.
  private static final String LOST_ORDERS =
      " FROM orders o WHERE NOT EXISTS (SELECT 1 FROM outbox_inbox l"
          + " WHERE l.operation_id = CONCAT(?, CAST(o.id AS VARCHAR(20)), ?))";
  private static final String COUNT_LOST = "SELECT COUNT(*)" + LOST_ORDERS;
  // SQL:2008 paging, which H2, PostgreSQL and SQL Server all accept (SQL Server has no LIMIT).
  private static final String FIRST_LOST =
      "SELECT o.id" + LOST_ORDERS + " ORDER BY o.id OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY";

  @Inject DataSource dataSource;
  @Inject TransactionalOutbox transactionalOutbox;
  @Inject Jdbc jdbc;
  @Inject Invoices invoices;

  private JdbcOutboxAdminStore outboxStore;

  @PostConstruct
  void init() {
    outboxStore = JdbcOutboxAdminStore.create(dataSource, transactionalOutbox.tables());
  }

  public DemoReport report() {
    Map<String, Long> outbox = new LinkedHashMap<>();
    outboxStore.countByState().forEach((state, count) -> outbox.put(String.valueOf(state), count));
    InboxLedger.Totals sink = new InboxLedger(dataSource).totals();
    List<String> lostSample =
        jdbc.query(
            FIRST_LOST,
            rs -> Order.billingOperationId(rs.getLong(1)),
            BILLING_OPERATION_PREFIX,
            BILLING_OPERATION_SUFFIX,
            LOST_SAMPLE);
    return new DemoReport(
        jdbc.queryLong(COUNT_ORDERS),
        outbox,
        sink.applied(),
        sink.redeliveries(),
        invoices.duplicateEffects(),
        jdbc.queryLong(COUNT_LOST, BILLING_OPERATION_PREFIX, BILLING_OPERATION_SUFFIX),
        lostSample);
  }
}
