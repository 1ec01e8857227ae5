package dev.outboxrelay.outbox.store.dialect;

/**
 * The reconciliation's statements on one database, for one outbox's names: confirmations, the
 * window's classification, its conditional moves, the runs, and the fleet lock's leases. Made by
 * {@link Dialect#reconciliation}; every statement is rendered for the names when the set is made.
 * Parameters and columns are documented on the dialect's builder of each statement ({@link
 * Dialect}).
 */
public final class ReconciliationStatements {
  private final Dialect dialect;
  private final OutboxTables tables;

  private final String upsertConfirmation;
  private final String classifyWindow;
  private final String confirmSent;
  private final String redrive;
  private final String acceptConfirmed;
  private final String insertRun;
  private final String finishRun;
  private final String insertItem;
  private final String findRun;
  private final String latestFinishedRun;
  private final String recentRuns;
  private final String latestSuccessfulRun;
  private final String countRunsInSlot;
  private final String items;
  private final String takeLock;
  private final String insertLock;
  private final String renewLock;
  private final String releaseLock;
  private final String lockHolder;
  private final String databaseNow;

  ReconciliationStatements(Dialect dialect, OutboxTables tables) {
    this.dialect = dialect;
    this.tables = tables;
    Renderer r = new Renderer(tables);
    upsertConfirmation = r.render(dialect.upsertConfirmationSql());
    classifyWindow = r.render(dialect.classifyWindowSql());
    confirmSent = r.render(dialect.confirmSentSql());
    redrive = r.render(dialect.redriveSql());
    acceptConfirmed = r.render(dialect.acceptConfirmedSql());
    insertRun = r.render(dialect.insertRunSql());
    finishRun = r.render(dialect.finishRunSql());
    insertItem = r.render(dialect.insertItemSql());
    findRun = r.render(dialect.findRunSql());
    latestFinishedRun = r.render(dialect.latestFinishedRunSql());
    recentRuns = r.render(dialect.recentRunsSql());
    latestSuccessfulRun = r.render(dialect.latestSuccessfulRunSql());
    countRunsInSlot = r.render(dialect.countRunsInSlotSql());
    items = r.render(dialect.itemsSql());
    takeLock = r.render(dialect.takeLockSql());
    insertLock = r.render(dialect.insertLockSql());
    renewLock = r.render(dialect.renewLockSql());
    releaseLock = r.render(dialect.releaseLockSql());
    lockHolder = r.render(dialect.lockHolderSql());
    databaseNow = r.render(dialect.clock().nowSql());
  }

  public Dialect dialect() {
    return dialect;
  }

  public OutboxTables tables() {
    return tables;
  }

  public String upsertConfirmationSql() {
    return upsertConfirmation;
  }

  /** Columns: {@link Dialect#WINDOW_COLUMNS}. */
  public String classifyWindowSql() {
    return classifyWindow;
  }

  public String confirmSentSql() {
    return confirmSent;
  }

  public String redriveSql() {
    return redrive;
  }

  public String acceptConfirmedSql() {
    return acceptConfirmed;
  }

  public String insertRunSql() {
    return insertRun;
  }

  public String finishRunSql() {
    return finishRun;
  }

  public String insertItemSql() {
    return insertItem;
  }

  /** Columns: {@link Dialect#RUN_COLUMNS}. */
  public String findRunSql() {
    return findRun;
  }

  public String latestFinishedRunSql() {
    return latestFinishedRun;
  }

  public String recentRunsSql() {
    return recentRuns;
  }

  public String latestSuccessfulRunSql() {
    return latestSuccessfulRun;
  }

  public String countRunsInSlotSql() {
    return countRunsInSlot;
  }

  public String itemsSql() {
    return items;
  }

  public String takeLockSql() {
    return takeLock;
  }

  public String insertLockSql() {
    return insertLock;
  }

  public String renewLockSql() {
    return renewLock;
  }

  public String releaseLockSql() {
    return releaseLock;
  }

  public String lockHolderSql() {
    return lockHolder;
  }

  public String databaseNowSql() {
    return databaseNow;
  }

  @Override
  public String toString() {
    return dialect + " reconciliation of " + tables;
  }
}
