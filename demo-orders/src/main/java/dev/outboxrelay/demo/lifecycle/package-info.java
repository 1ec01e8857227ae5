/**
 * Startup work. The demo's own tables are migrated by Quarkus Flyway before startup completes;
 * {@link dev.outboxrelay.demo.lifecycle.OutboxSchemaMigrator} then creates or upgrades the
 * outbox tables with outbox-lib's own migrations (history table {@code outbox_schema_history}).
 */
package dev.outboxrelay.demo.lifecycle;
