package dev.outboxrelay.outbox.inbox.jta;

import dev.outboxrelay.outbox.error.OutboxStoreException;
import dev.outboxrelay.outbox.inbox.Inbox;
import dev.outboxrelay.outbox.inbox.InboxConfig;
import dev.outboxrelay.outbox.inbox.InboxConflictException;
import dev.outboxrelay.outbox.inbox.InboxDelivery;
import dev.outboxrelay.outbox.inbox.InboxHandler;
import dev.outboxrelay.outbox.inbox.InboxReceipt;
import dev.outboxrelay.outbox.inbox.InvalidDeliveryException;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.literal.NamedLiteral;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * CDI bean that receives in the JTA transaction: it joins the caller's, or begins one and commits
 * it before returning ({@link Transactional.TxType#REQUIRED}), so a receipt returned from a call
 * outside a transaction means the record and the effect are committed: acknowledge only then.
 *
 * <p>A failing handler ({@code InboxHandlerException}) or a database error rolls the transaction
 * back (marks a joined one rollback-only): nothing is recorded. A conflict ({@link
 * InboxConflictException}) or bad input ({@link InvalidDeliveryException}) writes nothing and
 * leaves the transaction as it was.
 *
 * <p>Configuration: {@code outbox.inbox.datasource} (a named datasource; absent: the default one),
 * {@code outbox.inbox.max-payload-bytes} (default 1048576) and {@code
 * outbox.inbox.confirmation-source} (absent: the inbox is the ledger; set: each application also
 * counts in the relay's {@code outbox_confirmation}, same database).
 */
@ApplicationScoped
public class TransactionalInbox {
  /**
   * Resolved at start-up, not at build time: an application that has this library but no default
   * datasource (the relay, with named ones only) must still build when it does not use the inbox.
   */
  @Inject @Any Instance<DataSource> dataSources;

  /** The named datasource of the inbox table; absent: the default datasource. */
  @ConfigProperty(name = "outbox.inbox.datasource")
  Optional<String> datasourceName;

  @ConfigProperty(name = "outbox.inbox.max-payload-bytes", defaultValue = "1048576")
  int maxPayloadBytes;

  @ConfigProperty(name = "outbox.inbox.confirmation-source")
  Optional<String> confirmationSource;

  private Inbox inbox;
  private DataSource dataSource;

  @PostConstruct
  void init() {
    Instance<DataSource> chosen =
        datasourceName
            .map(name -> dataSources.select(NamedLiteral.of(name)))
            .orElseGet(() -> dataSources.select(Default.Literal.INSTANCE));
    if (!chosen.isResolvable()) {
      throw new IllegalStateException(
          "outbox.inbox: no "
              + datasourceName.map(n -> "datasource named '" + n + "'").orElse("default datasource")
              + " to receive on (set outbox.inbox.datasource)");
    }
    dataSource = chosen.get();
    try {
      InboxConfig config =
          InboxConfig.defaults().withMaxPayloadBytes(maxPayloadBytes).withSavepoint(false);
      if (confirmationSource.isPresent()) {
        config = config.withConfirmationSource(confirmationSource.get());
      }
      inbox = new Inbox(config);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "outbox.inbox configuration is invalid: "
              + e.getMessage()
                  .replace("maxPayloadBytes", "max-payload-bytes")
                  .replace("confirmationSource", "confirmation-source"),
          e);
    }
  }

  /** The datasource of the inbox table (for its ledger and retention). */
  public DataSource dataSource() {
    return dataSource;
  }

  /** The plain inbox with this bean's settings (validation, limits). */
  public Inbox inbox() {
    return inbox;
  }

  /**
   * Receives once in the current or a new transaction; see the class comment and {@link
   * Inbox#receive}.
   */
  @Transactional(
      value = Transactional.TxType.REQUIRED,
      dontRollbackOn = {InboxConflictException.class, InvalidDeliveryException.class})
  public InboxReceipt receive(InboxDelivery delivery, InboxHandler handler) {
    inbox.validate(delivery);
    try (Connection c = dataSource.getConnection()) {
      return inbox.receive(c, delivery, handler);
    } catch (SQLException e) {
      throw new OutboxStoreException("cannot obtain the transaction's connection", e);
    }
  }
}
