package dev.outboxrelay.outbox.store.dialect;

import java.time.Instant;

/**
 * The operator's statements on one database, for one outbox's names: counts and ages, jobs and
 * their attempts, the listing, replay and cancel. Made by {@link Dialect#admin}; every fixed
 * statement is rendered for the names when the set is made. Parameters and columns are documented
 * on the dialect's builder of each statement ({@link Dialect}).
 */
public final class AdminStatements {
  private final Dialect dialect;
  private final Renderer renderer;

  private final String countByState;
  private final String oldestReady;
  private final String backlogByDestination;
  private final String databaseNow;
  private final String findJob;
  private final String findByOperationId;
  private final String attempts;
  private final String replayDead;
  private final String cancelReady;
  private final String insertCancelAttempt;
  private final String countByDestinationAndState;
  private final String countDeadByErrorClass;
  private final String deadOrderingKeys;

  AdminStatements(Dialect dialect, OutboxTables tables) {
    this.dialect = dialect;
    this.renderer = new Renderer(tables);
    countByState = renderer.render(dialect.countByStateSql());
    oldestReady = renderer.render(dialect.oldestReadySql());
    backlogByDestination = renderer.render(dialect.backlogByDestinationSql());
    databaseNow = renderer.render(dialect.clock().nowSql());
    findJob = renderer.render(dialect.findJobSql());
    findByOperationId = renderer.render(dialect.findByOperationIdSql());
    attempts = renderer.render(dialect.attemptsSql());
    replayDead = renderer.render(dialect.replayDeadSql());
    cancelReady = renderer.render(dialect.cancelReadySql());
    insertCancelAttempt = renderer.render(dialect.insertCancelAttemptSql());
    countByDestinationAndState = renderer.render(dialect.countByDestinationAndStateSql());
    countDeadByErrorClass = renderer.render(dialect.countDeadByErrorClassSql());
    deadOrderingKeys = renderer.render(dialect.deadOrderingKeysSql());
  }

  public Dialect dialect() {
    return dialect;
  }

  public String countByStateSql() {
    return countByState;
  }

  public String oldestReadySql() {
    return oldestReady;
  }

  public String backlogByDestinationSql() {
    return backlogByDestination;
  }

  /** Columns: database now. */
  public String databaseNowSql() {
    return databaseNow;
  }

  public String findJobSql() {
    return findJob;
  }

  public String findByOperationIdSql() {
    return findByOperationId;
  }

  public String attemptsSql() {
    return attempts;
  }

  /** One page of the listing ({@link Dialect#SUMMARY_COLUMNS}), every condition a parameter. */
  public BoundSql listJobs(Listing q) {
    return renderer.render(dialect.listJobs(q));
  }

  /** A {@code LIKE} pattern matching text that contains {@code text} literally. */
  public String containsPattern(String text) {
    return dialect.containsPattern(text);
  }

  /** Counts the dead jobs a filter matches. */
  public BoundSql countDead(
      String destination, String errorClass, Instant diedFrom, Instant diedTo, String orderingKey) {
    return renderer.render(
        dialect.countDead(destination, errorClass, diedFrom, diedTo, orderingKey));
  }

  /** Replays up to {@code limit} of the dead jobs a filter matches, lowest ids first. */
  public BoundSql replayDead(
      String destination,
      String errorClass,
      Instant diedFrom,
      Instant diedTo,
      String orderingKey,
      int limit) {
    return renderer.render(
        dialect.replayDead(destination, errorClass, diedFrom, diedTo, orderingKey, limit));
  }

  public String replayDeadSql() {
    return replayDead;
  }

  public String cancelReadySql() {
    return cancelReady;
  }

  public String insertCancelAttemptSql() {
    return insertCancelAttempt;
  }

  public String countByDestinationAndStateSql() {
    return countByDestinationAndState;
  }

  public String countDeadByErrorClassSql() {
    return countDeadByErrorClass;
  }

  public String deadOrderingKeysSql() {
    return deadOrderingKeys;
  }

  @Override
  public String toString() {
    return dialect + " admin of " + renderer.tables();
  }
}
