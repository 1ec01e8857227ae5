package dev.outboxrelay.outbox.store.dialect;

import java.util.List;

/**
 * A statement whose conditions depend on a filter, with its parameters in order. The dialect builds
 * the SQL only from fixed column conditions; every value is a bind parameter.
 */
public record BoundSql(String sql, List<Object> params) {
  public BoundSql {
    params = List.copyOf(params);
  }
}
