package dev.outboxrelay.outbox.store.dialect;

/**
 * A statement parameter bound as one array of the driver ({@code Connection.createArrayOf}), for
 * databases that take a whole batch as two arrays (PostgreSQL's {@code unnest}).
 *
 * @param type the element type's SQL name, e.g. {@code bigint}
 * @param elements the elements, in order
 */
public record SqlArray(String type, Object[] elements) {}
