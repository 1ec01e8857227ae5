/**
 * Sources: the outbox databases one relay delivers from. A {@link SourceSpec} is one configured
 * database ({@code outbox.sources.<name>.*}, or the single source {@code default}); a {@link
 * RelaySource} runs it: its own dialect (detected), store, claim loop, lease reaper, notification
 * listener, gauges and state. A source whose database is down, at start-up or later, retries with
 * pauses growing to {@code outbox.relay.error-max-wait} and is DOWN in readiness and {@code
 * outbox_source_up}; the other sources are not affected. Its state changes are logged through
 * {@link dev.outboxrelay.relay.state.StateChangeLog}, once each. A {@link SourceSchedule} runs a
 * periodic pass on every source (retention, reconciliation).
 */
package dev.outboxrelay.relay.source;
