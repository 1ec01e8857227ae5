/**
 * Starts the relay's services on Quarkus start-up (datasource, migrations, sinks, claim loop,
 * reaper, gauges) and stops them gracefully on shutdown.
 */
package dev.outboxrelay.relay.lifecycle;
