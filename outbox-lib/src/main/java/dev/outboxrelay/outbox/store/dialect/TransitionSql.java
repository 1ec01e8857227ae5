package dev.outboxrelay.outbox.store.dialect;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;

/**
 * What happens to a claimed job: the lease owner's token-checked transitions, the reaper of expired
 * leases and retention of finished jobs ({@link JobStatements} hands them out).
 */
abstract class TransitionSql extends ClaimSql {

  TransitionSql(String name, SqlClock clock, TypeBinding binding, ErrorCodes errors) {
    super(name, clock, binding, errors);
  }

  // ---- token-checked transitions (parameters end with id, claim_token) -----------------------

  /** Extends the lease. Parameters: lease millis, id, token. */
  String renewLeaseSql() {
    return "UPDATE outbox_message SET lease_until = "
        + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /**
   * The batched heartbeat where {@link #updateReturnsRows()}: extends to database now + {@code
   * leaseMillis} the lease of every (id, token) pair whose row is still {@code W} with that token,
   * and returns the ids it extended. Default: the pairs as {@link #tokenPairsCondition}.
   */
  BoundSql renewLeases(List<Long> ids, List<UUID> tokens, long leaseMillis) {
    throw new UnsupportedOperationException(name + " renews locked leases");
  }

  /**
   * Extends the leases of {@code n} rows locked by {@link #lockTokensHeldSql}. Parameters: lease
   * millis, the n ids.
   */
  String renewLockedSql(int n) {
    return "UPDATE outbox_message SET lease_until = "
        + nowPlusMillisParam()
        + " WHERE state = 'W' AND id IN "
        + placeholders(n);
  }

  /**
   * The attempts already recorded with one outcome for {@code n} jobs: a transition retried after
   * an answer that never came (the connection broke at commit, the process froze) reads back
   * whether its first try committed, instead of calling its own committed outcome stale.
   * Parameters: outcome, then the n message ids. Columns: message_id, claim_token.
   */
  String recordedAttemptsSql(int n) {
    return "SELECT message_id, claim_token FROM outbox_attempt WHERE outcome = ? AND message_id IN "
        + placeholders(n);
  }

  /** W → S. Parameters: id, token. */
  String markDeliveredSql() {
    return "UPDATE outbox_message "
        + deliveredAssignments()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /**
   * The assignments of W → S ({@code SET ...}), shared by the single and the batched completion.
   */
  String deliveredAssignments() {
    return "SET state = 'S', sent_at = "
        + now()
        + ", claim_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = NULL";
  }

  /**
   * W → S for many jobs in one statement where {@link #updateReturnsRows()}: each pair's row is
   * completed only while it is {@code W} with that token; the others (ownership lost) change
   * nothing. Columns: id of each row completed.
   */
  BoundSql markDeliveredAll(List<Long> ids, List<UUID> tokens) {
    throw new UnsupportedOperationException(name + " completes locked rows");
  }

  /**
   * Locks the rows of {@code pairs} (id, token) pairs that are still {@code W} with their token.
   * Parameters: as {@link #tokenPairsCondition}. Columns: id.
   */
  String lockTokensHeldSql(int pairs) {
    return "SELECT m.id FROM outbox_message m WHERE m.state = 'W' AND "
        + tokenPairsCondition("m", pairs)
        + " FOR UPDATE";
  }

  /** W → S of {@code n} rows locked by {@link #lockTokensHeldSql}. Parameters: the n ids. */
  String markLockedDeliveredSql(int n) {
    return "UPDATE outbox_message "
        + deliveredAssignments()
        + " WHERE state = 'W' AND id IN "
        + placeholders(n);
  }

  /**
   * The row aliased {@code row} is one of {@code pairs} (id, token) pairs: an id list the primary
   * key index serves, then the pairs themselves. Parameters ({@link #tokenPairs}): the ids, then
   * each id and token.
   */
  static String tokenPairsCondition(String row, int pairs) {
    return row
        + ".id IN "
        + placeholders(pairs)
        + " AND ("
        + row
        + ".id, "
        + row
        + ".claim_token) IN ("
        + String.join(", ", Collections.nCopies(pairs, "(?, ?)"))
        + ")";
  }

  /** The parameters of {@link #tokenPairsCondition}: the ids, then each id and token. */
  static List<Object> tokenPairs(List<Long> ids, List<UUID> tokens) {
    List<Object> params = new ArrayList<>(ids);
    for (int i = 0; i < ids.size(); i++) {
      params.add(ids.get(i));
      params.add(tokens.get(i));
    }
    return params;
  }

  /** W → R after a backoff. Parameters: last_error, delay millis, id, token. */
  String markForRetrySql() {
    return "UPDATE outbox_message SET state = 'R', claim_token = NULL, lease_until = NULL,"
        + " attempts = attempts + 1, last_error = ?, deliver_after = "
        + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /** W → D. Parameters: last_error, id, token. */
  String markDeadSql() {
    return "UPDATE outbox_message SET state = 'D', claim_token = NULL, lease_until = NULL,"
        + " attempts = attempts + 1, last_error = ? WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /** W → R without counting an attempt. Parameters: id, token. */
  String releaseSql() {
    return "UPDATE outbox_message SET state = 'R', claim_token = NULL, lease_until = NULL"
        + " WHERE id = ? AND claim_token = ? AND state = 'W'";
  }

  /**
   * Records an attempt that just finished. Parameters: message_id, attempt_no, claim_token,
   * started_at (when the send started, on the database clock; null when unknown), minus elapsed
   * millis (started_at = now - elapsed when unknown), outcome, error_class, error_message,
   * response_summary, relay_instance.
   */
  String insertAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, outcome,"
        + " error_class, error_message, response_summary, relay_instance) VALUES (?, ?, ?, COALESCE("
        + clock.timestampParam()
        + ", "
        + nowPlusMillisParam()
        + "), ?, ?, ?, ?, ?)";
  }

  // ---- reaper --------------------------------------------------------------------------------

  /**
   * Locks expired leases for the reaper, skipping rows other reapers hold. Runs inside a
   * transaction. Parameters: limit. Columns: id, claim_token, attempts, claimed_at, ordering_key.
   */
  String lockExpiredLeasesSql() {
    return "SELECT id, claim_token, attempts, claimed_at, ordering_key FROM outbox_message"
        + " WHERE state = 'W' AND lease_until < "
        + now()
        + " ORDER BY lease_until LIMIT ? FOR UPDATE SKIP LOCKED";
  }

  /**
   * Returns one locked, expired lease to R (or D when attempts reach the maximum), invalidating its
   * token, due again after a retry delay (as after a failure). Parameters: max attempts,
   * last_error, retry delay millis, id, token.
   */
  String expireLeaseSql() {
    return "UPDATE outbox_message SET state = CASE WHEN attempts + 1 >= ? THEN 'D' ELSE 'R' END,"
        + " claim_token = NULL, lease_until = NULL, attempts = attempts + 1, last_error = ?,"
        + " deliver_after = "
        + nowPlusMillisParam()
        + " WHERE id = ? AND claim_token = ? AND state = 'W' AND lease_until < "
        + now();
  }

  /**
   * Records the attempt an expired lease stands for. Parameters: message_id, attempt_no,
   * claim_token, started_at (the claim time), error_message.
   */
  String insertExpiredAttemptSql() {
    return "INSERT INTO outbox_attempt (message_id, attempt_no, claim_token, started_at, outcome,"
        + " error_class, error_message) VALUES (?, ?, ?, ?, 'LEASE_EXPIRED', 'LeaseExpired', ?)";
  }

  // ---- retention -----------------------------------------------------------------------------

  /**
   * The rows retention may delete, on the row aliased {@code row}: sent ({@code S}) longer than the
   * keep age ago, or confirmed ({@code C}) longer ago (by {@code confirmed_at}; {@code sent_at} for
   * a row confirmed without one). Never {@code R}, {@code W} or {@code D}; a row whose time is null
   * is never deleted. One parameter: minus the keep age in millis (cutoff = database now + it).
   */
  String finishedBeforeCondition(String row) {
    return row
        + ".state IN ('S', 'C') AND CASE WHEN "
        + row
        + ".state = 'C' THEN COALESCE("
        + row
        + ".confirmed_at, "
        + row
        + ".sent_at) ELSE "
        + row
        + ".sent_at END < "
        + nowPlusMillisParam();
  }

  /**
   * Picks up to {@code limit} finished jobs ({@link #finishedBeforeCondition}) older than {@code
   * keepMillis} by the database clock, in id order, for {@link #deleteFinishedSql}: locked,
   * skipping rows another transaction holds, where the database can; where it cannot, the delete
   * checks the condition again. Columns: id.
   */
  abstract BoundSql pickFinished(long keepMillis, int limit);

  /**
   * Deletes those of {@code n} picked jobs that are still finished before database now + the
   * parameter (minus the kept span); their out-of-band bodies go with them ({@code ON DELETE
   * CASCADE}), their attempts do not ({@link #deleteAttemptsOfDeletedSql}). Parameters: the n ids,
   * then -keep millis. Returns the update count: jobs deleted.
   */
  String deleteFinishedSql(int n) {
    return "DELETE FROM outbox_message WHERE id IN "
        + placeholders(n)
        + " AND "
        + finishedBeforeCondition("outbox_message");
  }

  /**
   * Deletes the attempts of those of {@code n} jobs whose row is gone: run in the transaction of
   * {@link #deleteFinishedSql} with the same ids, it removes the attempts of exactly the jobs that
   * statement deleted (since V9 no foreign key cascades them), and none of a picked job it left.
   * Parameters: the n message ids.
   */
  String deleteAttemptsOfDeletedSql(int n) {
    return "DELETE FROM outbox_attempt WHERE message_id IN "
        + placeholders(n)
        + " AND NOT EXISTS (SELECT 1 FROM outbox_message m WHERE m.id = outbox_attempt.message_id)";
  }
}
