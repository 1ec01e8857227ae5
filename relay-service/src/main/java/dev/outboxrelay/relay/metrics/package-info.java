/**
 * Micrometer meters of the relay; names are a public contract (see docs/design.md "Observability").
 */
package dev.outboxrelay.relay.metrics;
