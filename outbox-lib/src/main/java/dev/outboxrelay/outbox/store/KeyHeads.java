package dev.outboxrelay.outbox.store;

import dev.outboxrelay.outbox.jdbc.JdbcStatements.Binder;
import dev.outboxrelay.outbox.jdbc.Rows;
import dev.outboxrelay.outbox.store.dialect.BoundSql;
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
import java.util.Set;
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

  /** A key's head just promoted, and the run asked for from it (empty when none was). */
  record Promoted(long head, List<Long> run) {}

  /**
   * {@link #promoteHeads} of {@code keys} and, for those in {@code runKeys}, their {@link #run} of
   * at most {@code runLimit} jobs from the new head: one statement for all keys where the dialect
   * has one ({@link JobStatements#promoteHeadsWithRuns}), else three per key. A head that finished
   * in another transaction between the read and its promotion is looked for again key by key.
   * Returns each key that has a head, in key order.
   */
  Map<String, Promoted> promoteHeadsWithRuns(
      Connection tx,
      Collection<String> keys,
      Set<String> runKeys,
      int runLimit,
      TypeBinding binding)
      throws SQLException {
    record Row(long id, char state, boolean due, boolean promoted) {}
    Map<String, Promoted> promoted = new TreeMap<>();
    TreeSet<String> sorted = new TreeSet<>(keys);
    BoundSql batched =
        sorted.isEmpty()
            ? null
            : jobs.promoteHeadsWithRuns(List.copyOf(sorted), Math.max(1, runLimit));
    Collection<String> oneByOne = sorted;
    if (batched != null) {
      Map<String, List<Row>> byKey = new TreeMap<>();
      for (Map.Entry<String, Row> r :
          Dialects.query(
              tx,
              batched,
              binding,
              rs ->
                  Map.entry(
                      rs.getString(1),
                      new Row(
                          rs.getLong(2),
                          rs.getString(3).charAt(0),
                          rs.getInt(4) == 1,
                          rs.getInt(5) == 1)))) {
        byKey.computeIfAbsent(r.getKey(), k -> new ArrayList<>()).add(r.getValue());
      }
      oneByOne = new ArrayList<>();
      for (Map.Entry<String, List<Row>> e : byKey.entrySet()) {
        List<Row> rows = e.getValue().stream().sorted(Comparator.comparingLong(Row::id)).toList();
        if (!rows.get(0).promoted()) {
          oneByOne.add(e.getKey()); // its head finished meanwhile: look again
          continue;
        }
        List<Long> run = new ArrayList<>();
        if (runKeys.contains(e.getKey())) {
          for (Row r : rows) {
            if (run.size() == runLimit || !JobState.READY.is(r.state()) || !r.due()) {
              break;
            }
            run.add(r.id());
          }
        }
        promoted.put(e.getKey(), new Promoted(rows.get(0).id(), run));
      }
    }
    for (Map.Entry<String, Long> e : promoteHeads(tx, oneByOne).entrySet()) {
      String key = e.getKey();
      promoted.put(
          key,
          new Promoted(
              e.getValue(),
              runKeys.contains(key) ? run(tx, key, e.getValue(), runLimit, binding) : List.of()));
    }
    return promoted;
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
