package dev.outboxrelay.outbox.store.dialect;

import java.time.Instant;

/**
 * The conditions of one page of the operator's listing ({@link AdminStatements#listJobs}), as the
 * admin store passes them from its query; a null condition is not applied. The dialect builds only
 * fixed column conditions from them; every value is a bind parameter.
 *
 * @param state the job's state code
 * @param destination the destination
 * @param orderingKey the ordering key
 * @param errorClass the error class of the job's latest failure
 * @param operationIdContains text the operation ID contains, taken literally
 * @param from the job's time (its creation; for a dead job the time it died) at or after this
 * @param to the same time before this
 * @param afterId the last id of the previous page, 0 for the first
 * @param limit rows on the page
 */
public record Listing(
    Character state,
    String destination,
    String orderingKey,
    String errorClass,
    String operationIdContains,
    Instant from,
    Instant to,
    long afterId,
    int limit) {}
