/**
 * Health: liveness (the claim loop threads run) and readiness, per source (its database answers,
 * claims and maintenance succeed, the backlog drains) and per destination. Each source's database
 * and each destination has a {@link dev.outboxrelay.relay.state.StateChangeLog}: UP or DOWN with
 * the reason, logged once per change plus a rate-limited reminder, and a 1/0 gauge ({@code
 * outbox_source_up}, {@code outbox_destination_up}).
 */
package dev.outboxrelay.relay.health;
