-- outbox_attempt.message_id no longer references outbox_message; retention deletes a job's
-- attempts itself, in the transaction that deletes the job (see the PostgreSQL script).
ALTER TABLE outbox_attempt DROP CONSTRAINT fk_outbox_attempt_message;
