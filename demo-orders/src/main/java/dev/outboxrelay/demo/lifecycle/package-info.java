/**
 * Startup work. {@link DemoSchemaMigrator} creates or upgrades the demo's own tables from {@code
 * db/demo/<kind>/} (history table {@code flyway_schema_history}) and the sink's inbox table; {@link
 * OutboxSchemaMigrator} creates or upgrades the outbox tables with outbox-lib's own migrations
 * (history table {@code outbox_schema_history}). Both run before the broker consumers start.
 */
package dev.outboxrelay.demo.lifecycle;
