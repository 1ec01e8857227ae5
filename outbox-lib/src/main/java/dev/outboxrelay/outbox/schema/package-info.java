/**
 * The outbox's Flyway migrations ({@link OutboxSchema}, scripts in {@code db/outbox/<dialect>/}),
 * for the database of a dialect ({@code store.dialect}) and the outbox's names ({@link
 * OutboxTables}, which live with the SQL in {@code store.dialect}: the statement sets and this
 * package both render through them). The scripts are written with the default names ({@code
 * outbox_message}, {@code ix_outbox_message_head}, ...) and rendered for configured ones by a
 * rendering Flyway resource provider; with the default names nothing is rewritten.
 */
package dev.outboxrelay.outbox.schema;

import dev.outboxrelay.outbox.store.dialect.OutboxTables;
