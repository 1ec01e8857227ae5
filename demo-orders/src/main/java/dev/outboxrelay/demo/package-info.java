/**
 * The demo application of the outbox: {@code POST /orders} writes an order and its billing job in
 * one transaction ({@link dev.outboxrelay.demo.order}); the relay delivers the job to the demo sink
 * ({@link dev.outboxrelay.demo.sink}), an "external system" that applies each operation ID once and
 * exposes its ledger for reconciliation; {@code GET /demo/report} ({@link
 * dev.outboxrelay.demo.report}) compares the two sides.
 */
package dev.outboxrelay.demo;
