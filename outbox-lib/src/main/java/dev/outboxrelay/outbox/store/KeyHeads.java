package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.dialect.JobStatements;
import dev.outboxrelay.outbox.store.dialect.TypeBinding;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
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
   * in another transaction meanwhile changes no row, and the next one is taken. Returns each key's
   * new head, in key order (a key left without unfinished jobs has none).
   */
  Map<String, Long> promoteHeads(Connection tx, Collection<String> keys) throws SQLException {
    Map<String, Long> heads = new TreeMap<>();
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
            heads.put(key, head.get());
            break;
          }
        }
      }
    }
    return heads;
  }

  /**
   * The run of {@code key} from its head {@code head} (just promoted in {@code tx}): the ids of at
   * most {@code limit} jobs of the key in id order from the head, each ready and due, ending before
   * the first unfinished job that is not (leased, or not due yet); finished jobs between them (a
   * cancelled one) are passed over. Empty when the head itself is not ready and due.
   */
  List<Long> run(Connection tx, String key, long head, int limit, TypeBinding binding)
      throws SQLException {
    record Row(long id, char state, boolean due) {}
    List<Row> rows =
        Dialects.query(
            tx,
            jobs.keyRun(key, head, limit),
            binding,
            rs -> new Row(rs.getLong(1), rs.getString(2).charAt(0), rs.getInt(3) == 1));
    List<Long> run = new ArrayList<>();
    for (Row r : rows.stream().sorted(Comparator.comparingLong(Row::id)).toList()) {
      if (run.size() == limit || !JobState.READY.is(r.state()) || !r.due()) {
        break;
      }
      run.add(r.id());
    }
    return run;
  }
}
