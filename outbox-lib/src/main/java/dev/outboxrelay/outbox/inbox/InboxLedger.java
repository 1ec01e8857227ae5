package dev.outboxrelay.outbox.inbox;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.store.dialect.DialectDetector;
import dev.outboxrelay.outbox.store.dialect.InboxStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The inbox read as the receiver's ledger of confirmations, for reconciliation: the rows are what
 * was applied, once each, with the time of application.
 */
public final class InboxLedger {
  private final DataSource dataSource;

  public InboxLedger(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * Applied operation IDs strictly after {@code since} (from the start when null), of {@code
   * destination} (every one when null), in {@code appliedAt}, operation ID order, up to {@code
   * limit} of them.
   *
   * <p>{@code next} is a time, so a page never ends inside a run of entries with equal {@code
   * appliedAt}: the page is cut before the run, and a run that fills the whole page is returned
   * whole, longer than {@code limit}. Following {@code next} never skips or repeats an entry.
   */
  public InboxLedgerPage page(Instant since, int limit, String destination) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1, was " + limit);
    }
    try (Connection c = dataSource.getConnection()) {
      InboxStatements d =
          DialectDetector.forProductName(c.getMetaData().getDatabaseProductName()).inbox();
      boolean one = destination != null;
      List<InboxLedgerEntry> rows = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(d.ledgerSql(since != null, one))) {
        int i = 1;
        if (since != null) {
          d.dialect().binding().bindInstant(ps, i++, since);
        }
        if (one) {
          ps.setString(i++, destination);
        }
        ps.setInt(i, limit + 1);
        read(d, ps, rows);
      }
      if (rows.size() <= limit) {
        return new InboxLedgerPage(rows, null);
      }
      Instant boundary = rows.get(limit).appliedAt();
      int end = limit;
      while (end > 0 && rows.get(end - 1).appliedAt().equals(boundary)) {
        end--;
      }
      if (end > 0) {
        return new InboxLedgerPage(
            List.copyOf(rows.subList(0, end)), rows.get(end - 1).appliedAt());
      }
      List<InboxLedgerEntry> run = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(d.ledgerAtSql(one))) {
        d.dialect().binding().bindInstant(ps, 1, boundary);
        if (one) {
          ps.setString(2, destination);
        }
        read(d, ps, run);
      }
      boolean more;
      try (PreparedStatement ps = c.prepareStatement(d.ledgerMoreSql(one))) {
        d.dialect().binding().bindInstant(ps, 1, boundary);
        if (one) {
          ps.setString(2, destination);
        }
        try (ResultSet rs = ps.executeQuery()) {
          more = rs.next() && rs.getLong(1) > 0;
        }
      }
      return new InboxLedgerPage(run, more ? boundary : null);
    } catch (SQLException e) {
      throw new OutboxStoreException("inbox ledger: reading a page failed: " + e.getMessage(), e);
    }
  }

  /** Totals over the whole inbox: operation IDs applied and deliveries received. */
  public Totals totals() {
    try (Connection c = dataSource.getConnection()) {
      InboxStatements d =
          DialectDetector.forProductName(c.getMetaData().getDatabaseProductName()).inbox();
      try (PreparedStatement ps = c.prepareStatement(d.totalsSql());
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Totals(rs.getLong(1), rs.getLong(2));
      }
    } catch (SQLException e) {
      throw new OutboxStoreException(
          "inbox ledger: reading the totals failed: " + e.getMessage(), e);
    }
  }

  /**
   * @param applied operation IDs applied
   * @param deliveries deliveries received, repeats included
   */
  public record Totals(long applied, long deliveries) {
    public long redeliveries() {
      return deliveries - applied;
    }
  }

  private static void read(InboxStatements d, PreparedStatement ps, List<InboxLedgerEntry> out)
      throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        long messageId = rs.getLong(3);
        Long mid = rs.wasNull() ? null : messageId;
        out.add(
            new InboxLedgerEntry(
                rs.getString(1),
                rs.getString(2),
                mid,
                d.dialect().binding().readInstant(rs, 4),
                rs.getLong(5),
                1));
      }
    }
  }
}
