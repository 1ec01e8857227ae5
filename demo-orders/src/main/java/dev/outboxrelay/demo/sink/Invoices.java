package dev.outboxrelay.demo.sink;

import dev.outboxrelay.demo.jdbc.Jdbc;
import dev.outboxrelay.outbox.inbox.InboxDelivery;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The sink's business effect: one {@code demo_invoice} row per applied delivery, written by the
 * inbox's handler on the inbox's connection. The table's operation_id is deliberately not unique,
 * so a dedup failure would show as {@link #duplicateEffects()} instead of being hidden.
 */
@ApplicationScoped
public class Invoices {
  private static final String INSERT =
      "INSERT INTO demo_invoice (operation_id, order_payload) VALUES (?, ?)";
  private static final String DUPLICATE_EFFECTS =
      "SELECT COUNT(*) FROM (SELECT operation_id FROM demo_invoice"
          + " GROUP BY operation_id HAVING COUNT(*) > 1) d";

  @Inject Jdbc jdbc;

  /** The inbox handler: writes the invoice; its outcome answers repeats. */
  public String apply(Connection connection, InboxDelivery delivery) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(INSERT)) {
      ps.setString(1, delivery.operationId());
      ps.setString(2, delivery.payloadText());
      ps.executeUpdate();
    }
    return "invoiced";
  }

  /** Operation IDs with more than one invoice (should be 0). */
  public long duplicateEffects() {
    return jdbc.queryLong(DUPLICATE_EFFECTS);
  }
}
