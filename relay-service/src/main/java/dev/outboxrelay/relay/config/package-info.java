/**
 * Relay configuration: one {@code @ConfigMapping} under {@code outbox.*}, validated at start-up.
 */
package dev.outboxrelay.relay.config;
