/**
 * {@code bin/bench}: the measuring tool of the relay, not a test (no {@code *Test}/{@code *IT}
 * names, so surefire and failsafe never run it). {@link dev.outboxrelay.relay.bench.Bench} runs the
 * scenarios against a fresh {@code bench} schema and prints {@code BENCH <scenario> key=value ...}
 * lines. Every throughput is also given as a ratio to the {@code sql-limit} measured in the same
 * run: a tight JDBC loop of the store's own claim and complete statements, the physical anchor of
 * the machine at that moment, so ratios stay comparable across machines and noisy neighbours.
 *
 * <p>The relay under test is the production wiring ({@code RelayAssembly}) with the defaults of
 * {@code RelayConfig} and a pooled Agroal datasource like the service's; only the sink is replaced,
 * by an in-process no-op that records when each job arrived (except in {@code drain-http} and
 * {@code drain-kafka}, which go through the real HTTP and Kafka sinks). {@code peer} runs
 * db-scheduler on the same database for comparison.
 */
package dev.outboxrelay.relay.bench;
