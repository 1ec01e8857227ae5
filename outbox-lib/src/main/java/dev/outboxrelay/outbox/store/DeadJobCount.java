package dev.outboxrelay.outbox.store;

/**
 * Dead jobs sharing one error class (see {@link DeadJobFilter} for how a job's class is found).
 *
 * @param errorClass null for dead jobs without a failed attempt
 */
public record DeadJobCount(String errorClass, long count) {}
