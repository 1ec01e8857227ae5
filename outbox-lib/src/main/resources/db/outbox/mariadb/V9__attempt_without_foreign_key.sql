-- outbox_attempt.message_id no longer references outbox_message; retention deletes a job's
-- attempts itself, in the transaction that deletes the job (see the PostgreSQL script). The index
-- ix_outbox_attempt_message, which InnoDB used for the key, stays for the history reads.
ALTER TABLE outbox_attempt DROP FOREIGN KEY fk_outbox_attempt_message;
