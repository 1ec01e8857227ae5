/**
 * The demo's end-to-end report: orders placed, outbox jobs by state, and what the sink applied. An
 * order is <em>lost</em> when no ledger row holds its billing operation ID; a <em>duplicate</em> is
 * an operation ID the sink invoiced more than once. After the relay has drained the outbox both
 * must be 0.
 */
package dev.outboxrelay.demo.report;
