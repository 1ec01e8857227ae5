/**
 * The outbox's tables: their Flyway migrations ({@link OutboxSchema}, scripts in {@code
 * db/outbox/<dialect>/}) and their names ({@link OutboxTables}: an optional schema and a table base
 * name, validated as plain identifiers). SQL everywhere is written with the default names ({@code
 * outbox_message}, {@code ix_outbox_message_due}, ...) and rendered for the configured ones by
 * {@link OutboxTables#render}: once per store for the dialects' statement sets ({@code
 * store.dialect}), by a rendering Flyway resource provider for the migrations. With the default
 * names nothing is rewritten.
 */
package dev.outboxrelay.outbox.schema;
