package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.dialect.JobStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Which job is its ordering key's head (docs/design.md "Ordering keys"), on both sides of {@code
 * key_wait}: the enqueue holds the key's latest unfinished job, a final transition (sent, dead,
 * cancelled) makes the key's next job the head. Runs inside the caller's transaction.
 */
public final class KeyHeads {
  private final JobStatements jobs;

  public KeyHeads(JobStatements jobs) {
    this.jobs = jobs;
  }

  /**
   * Share-locks the latest unfinished job of {@code key} in the caller's transaction and returns
   * true, or returns false when the key has none: the new job then waits behind it ({@code
   * key_wait}), and that job's final transition, which must update the locked row, waits for the
   * caller to commit and so sees the new job when it looks for the key's next head (docs/design.md
   * "Ordering keys"). The candidate is read without a lock and then locked by id; one that finished
   * meanwhile (or, under REPEATABLE READ, since the caller's snapshot) is passed for the next lower
   * one, so the walk ends.
   */
  public boolean holdLatestUnfinished(Connection c, String key) throws SQLException {
    long below = Long.MAX_VALUE;
    while (true) {
      long bound = below;
      Optional<Long> latest =
          extremeId(
              c,
              jobs.latestUnfinishedBelowSql(),
              ps -> {
                ps.setString(1, key);
                ps.setLong(2, bound);
              },
              true);
      if (latest.isEmpty()) {
        return false;
      }
      try (PreparedStatement ps = c.prepareStatement(jobs.lockUnfinishedSql())) {
        ps.setLong(1, latest.get());
        if (!Rows.list(ps, rs -> rs.getLong(1)).isEmpty()) {
          return true;
        }
      }
      below = latest.get();
    }
  }

  /** The largest ({@code max}) or smallest id a query returns (one column, any rows). */
  private static Optional<Long> extremeId(Connection c, String sql, Binder binder, boolean max)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return Rows.list(ps, rs -> rs.getLong(1)).stream().reduce(max ? Math::max : Math::min);
    }
  }

  /**
   * After jobs of {@code keys} reached a final state in transaction {@code tx}: makes each key's
   * earliest unfinished job its head ({@code key_wait} cleared), in key order. A head that finishes
   * in another transaction meanwhile changes no row, and the next one is taken. Returns the heads'
   * ids.
   */
  List<Long> promoteHeads(Connection tx, Collection<String> keys) throws SQLException {
    List<Long> heads = new ArrayList<>();
    for (String key : new TreeSet<>(keys)) {
      while (true) {
        Optional<Long> head =
            extremeId(tx, jobs.earliestUnfinishedSql(), ps -> ps.setString(1, key), false);
        if (head.isEmpty()) {
          break;
        }
        try (PreparedStatement ps = tx.prepareStatement(jobs.promoteHeadSql())) {
          ps.setLong(1, head.get());
          if (ps.executeUpdate() == 1) {
            heads.add(head.get());
            break;
          }
        }
      }
    }
    return heads;
  }
}
