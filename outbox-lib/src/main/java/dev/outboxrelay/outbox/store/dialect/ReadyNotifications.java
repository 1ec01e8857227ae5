package dev.outboxrelay.outbox.store.dialect;

/**
 * How a database announces newly committed jobs to relays that listen (PostgreSQL: the V4
 * migration's trigger calls {@code pg_notify(channel, <schema>)} on every insert into
 * outbox_message). A hint for latency only: relays keep polling, so a lost notification costs the
 * idle wait, never a job.
 *
 * @param channel the notification channel
 * @param listenSql subscribes the connection to {@code channel}
 * @param unlistenSql drops every subscription of the connection (before it goes back to a pool)
 * @param currentSchemaSql the schema the connection's unqualified names resolve to: the payload of
 *     the notifications meant for this outbox
 */
public record ReadyNotifications(
    String channel, String listenSql, String unlistenSql, String currentSchemaSql) {

  /** PostgreSQL, matching {@code db/outbox/postgresql/V4__ready_notification.sql}. */
  public static final ReadyNotifications POSTGRESQL =
      new ReadyNotifications(
          "outbox_ready", "LISTEN outbox_ready", "UNLISTEN *", "SELECT current_schema()");

  /**
   * These notifications for an outbox with configured names: the channel {@code <table>_ready} (the
   * V4 trigger, rendered the same way, notifies on it) and, when a schema is configured, that
   * schema as the payload to expect (the trigger sends its table's schema, whatever the listening
   * connection's default schema is). Itself for the default names.
   */
  public ReadyNotifications forTables(OutboxTables tables) {
    if (tables.isDefault()) {
      return this;
    }
    return new ReadyNotifications(
        tables.render(channel),
        tables.render(listenSql),
        unlistenSql,
        tables
            .schema()
            .map(s -> "SELECT CAST('" + s + "' AS VARCHAR(63))")
            .orElse(currentSchemaSql));
  }
}
