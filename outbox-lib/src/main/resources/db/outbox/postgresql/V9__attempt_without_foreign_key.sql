-- outbox_attempt.message_id no longer references outbox_message (docs/performance.md "What the
-- attempt row costs the completion"). Every attempt row is written by the store for a job it holds
-- or has just checked, in the transaction that moves the job, so the key guarded nothing the
-- store does not already guarantee, and its check per inserted row (a key-share lookup of the
-- message row the same transaction has just updated) cost about a third of a connection's
-- claim-and-complete rate. Retention, which relied on its ON DELETE CASCADE, deletes a job's
-- attempts itself, in the transaction that deletes the job. outbox_payload keeps its key.
-- PostgreSQL named the key itself in V1 (after the table, which outbox.table may rename), so it
-- is looked up, not named here.
DO $$
DECLARE
    fk name;
BEGIN
    FOR fk IN SELECT conname FROM pg_constraint
              WHERE conrelid = 'outbox_attempt'::regclass AND contype = 'f'
                AND confrelid = 'outbox_message'::regclass
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', 'outbox_attempt'::regclass, fk);
    END LOOP;
END;
$$;
