package dev.outboxrelay.demo.sink;

import dev.outboxrelay.demo.jdbc.DataAccessException;
import dev.outboxrelay.demo.jdbc.Jdbc;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * The sink's ledger and invoices: applies deliveries once per operation ID and answers the
 * reconciliation's questions. See the package comment for the model.
 */
@ApplicationScoped
public class SinkLedger {
  private static final Logger LOG = Logger.getLogger(SinkLedger.class);

  /**
   * Transactions one delivery may take: a first delivery that loses the insert race to a
   * concurrent one is retried once, as a repeat. A third unique violation would mean a bug.
   */
  static final int MAX_TRANSACTIONS = 3;

  private static final String COUNT_REPEAT =
      "UPDATE demo_sink_ledger SET deliveries = deliveries + 1,"
          + " last_delivery_at = CURRENT_TIMESTAMP WHERE operation_id = ?";
  private static final String DELIVERIES =
      "SELECT deliveries FROM demo_sink_ledger WHERE operation_id = ?";
  private static final String INSERT_LEDGER =
      "INSERT INTO demo_sink_ledger (operation_id, destination, message_id, payload)"
          + " VALUES (?, ?, ?, ?)";
  private static final String INSERT_INVOICE =
      "INSERT INTO demo_invoice (operation_id, order_payload) VALUES (?, ?)";

  private static final String ENTRIES =
      "SELECT l.operation_id, l.destination, l.message_id, l.first_applied_at, l.deliveries,"
          + " (SELECT COUNT(*) FROM demo_invoice i WHERE i.operation_id = l.operation_id)"
          + " AS applied_count FROM demo_sink_ledger l ";
  private static final String ORDER = " ORDER BY l.first_applied_at, l.operation_id";
  // SQL:2008 paging, which H2, PostgreSQL and SQL Server all accept (SQL Server has no LIMIT).
  private static final String FIRST_N = " OFFSET 0 ROWS FETCH NEXT ? ROWS ONLY";
  private static final String PAGE_FIRST = ENTRIES + ORDER + FIRST_N;
  private static final String PAGE_AFTER =
      ENTRIES + "WHERE l.first_applied_at > ?" + ORDER + FIRST_N;
  private static final String ALL_AT = ENTRIES + "WHERE l.first_applied_at = ?" + ORDER;
  private static final String COUNT_AFTER =
      "SELECT COUNT(*) FROM demo_sink_ledger WHERE first_applied_at > ?";

  private static final String TOTALS =
      "SELECT COUNT(*), COALESCE(SUM(deliveries), 0) FROM demo_sink_ledger";
  private static final String DUPLICATE_EFFECTS =
      "SELECT COUNT(*) FROM (SELECT operation_id FROM demo_invoice"
          + " GROUP BY operation_id HAVING COUNT(*) > 1) d";

  @Inject Jdbc jdbc;

  /**
   * Records one delivery in its own transaction: a repeat of an applied operation ID counts a
   * delivery; a first delivery writes the ledger row and the invoice. Safe when deliveries of
   * one operation ID run concurrently: exactly one of them applies the effect.
   */
  public SinkReceipt deliver(Delivery delivery) {
    for (int transaction = 1; ; transaction++) {
      try {
        SinkReceipt receipt = QuarkusTransaction.requiringNew().call(() -> applyOnce(delivery));
        LOG.infof("sink %s: operation %s message %s attempt %s applied=%s deliveries=%d",
            delivery.destination(), delivery.operationId(), delivery.messageId(),
            delivery.attempt(), receipt.applied(), receipt.deliveries());
        return receipt;
      } catch (DataAccessException e) {
        if (!e.isUniqueViolation() || transaction >= MAX_TRANSACTIONS) {
          throw e;
        }
        // A concurrent first delivery inserted the ledger row first; ours rolled back. The retry
        // sees the committed row and counts this delivery as a repeat.
        LOG.debugf("operation %s: lost the first-delivery race, retrying as a repeat",
            delivery.operationId());
      }
    }
  }

  private SinkReceipt applyOnce(Delivery d) {
    if (jdbc.update(COUNT_REPEAT, d.operationId()) == 1) {
      return new SinkReceipt(d.operationId(), false, jdbc.queryLong(DELIVERIES, d.operationId()));
    }
    // The ledger row first: its primary key is what stops a concurrent duplicate invoice.
    jdbc.update(INSERT_LEDGER, d.operationId(), d.destination(), d.messageId(), d.payload());
    jdbc.update(INSERT_INVOICE, d.operationId(), d.payload());
    return new SinkReceipt(d.operationId(), true, 1);
  }

  /**
   * Applied operation IDs in {@code appliedAt}, operation ID order, strictly after {@code since}
   * (from the start when null), up to {@code limit} of them.
   *
   * <p>{@code next} is a timestamp, so a page never ends inside a run of entries with equal
   * {@code appliedAt}: the page is cut before the run, and if the run fills the whole page it is
   * returned whole, longer than {@code limit}. Following {@code next} therefore never skips or
   * repeats an entry.
   */
  public LedgerPage page(Instant since, int limit) {
    List<LedgerEntry> rows = since == null
        ? jdbc.query(PAGE_FIRST, SinkLedger::entry, limit + 1)
        : jdbc.query(PAGE_AFTER, SinkLedger::entry, since, limit + 1);
    if (rows.size() <= limit) {
      return new LedgerPage(rows, null);
    }
    Instant boundary = rows.get(limit).appliedAt();
    int end = limit;
    while (end > 0 && rows.get(end - 1).appliedAt().equals(boundary)) {
      end--;
    }
    if (end > 0) {
      return new LedgerPage(List.copyOf(rows.subList(0, end)), rows.get(end - 1).appliedAt());
    }
    List<LedgerEntry> run = jdbc.query(ALL_AT, SinkLedger::entry, boundary);
    boolean more = jdbc.queryLong(COUNT_AFTER, boundary) > 0;
    return new LedgerPage(run, more ? boundary : null);
  }

  /** Totals over the whole ledger. */
  public LedgerSummary summary() {
    long duplicateEffects = jdbc.queryLong(DUPLICATE_EFFECTS);
    return jdbc.query(TOTALS, rs -> {
      long applied = rs.getLong(1);
      long deliveries = rs.getLong(2);
      return new LedgerSummary(applied, deliveries, deliveries - applied, duplicateEffects);
    }).get(0);
  }

  private static LedgerEntry entry(ResultSet rs) throws SQLException {
    long messageId = rs.getLong("message_id");
    boolean noMessageId = rs.wasNull();
    return new LedgerEntry(
        rs.getString("operation_id"),
        rs.getString("destination"),
        noMessageId ? null : messageId,
        Jdbc.instant(rs, "first_applied_at"),
        rs.getLong("deliveries"),
        rs.getLong("applied_count"));
  }
}
