/** Micrometer meters of the relay; names are a public contract (see DESIGN "Observability"). */
package dev.outboxrelay.relay.metrics;
