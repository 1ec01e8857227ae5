package dev.outboxrelay.demo.sink;

import dev.outboxrelay.outbox.inbox.InboxLedger;
import dev.outboxrelay.outbox.inbox.jaxrs.InboxLedgerResource;
import jakarta.inject.Inject;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The demo sink's confirmations, read by reconciliation ({@code http-ledger}) and by people:
 * outbox-lib's {@link InboxLedgerResource} at {@code /ledger}. {@code GET /ledger/summary} adds
 * {@code duplicateEffects}: operation IDs with more than one invoice, counted in the business table
 * rather than the inbox (0 unless deduplication failed).
 */
@Path("/ledger")
public class LedgerResource extends InboxLedgerResource {
  @Inject DataSource ledgerDataSource;
  @Inject Invoices invoices;

  @Override
  public Response summary() {
    InboxLedger.Totals t = new InboxLedger(ledgerDataSource).totals();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("applied", t.applied());
    body.put("deliveries", t.deliveries());
    body.put("redeliveries", t.redeliveries());
    body.put("duplicateEffects", invoices.duplicateEffects());
    return Response.ok(body).build();
  }
}
