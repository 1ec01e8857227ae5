package dev.outboxrelay.demo.report;

import java.util.List;
import java.util.Map;

/**
 * The body of {@code GET /demo/report}.
 *
 * @param orders orders placed
 * @param outbox outbox jobs by state (R, W, S, C, D), zeros included
 * @param applied operation IDs the sink applied
 * @param redeliveries deliveries the sink received for an already applied operation ID
 * @param duplicates operation IDs the sink invoiced more than once
 * @param lost orders whose billing operation ID the sink has not applied
 * @param lostOperationIds the first {@value DemoReportService#LOST_SAMPLE} of them, by order id
 */
public record DemoReport(
    long orders,
    Map<String, Long> outbox,
    long applied,
    long redeliveries,
    long duplicates,
    long lost,
    List<String> lostOperationIds) {}
