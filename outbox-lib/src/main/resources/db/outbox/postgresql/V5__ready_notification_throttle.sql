-- Throttles the V4 wake-up: a NOTIFY is cheap to send but expensive to commit. At commit PostgreSQL
-- serialises every notifying transaction of the database on one lock, held through the commit's WAL
-- flush, so with one NOTIFY per enqueue concurrent producers commit one at a time. Now an inserting
-- transaction notifies only when no other transaction of this outbox is notifying at that moment:
-- pg_try_advisory_xact_lock never waits, and the lock (per schema: relays of another schema in the
-- database still get theirs) is released when the holder commits or rolls back. A transaction that
-- skips its NOTIFY commits alongside one that sends it, and relays claim every ready job they find
-- when woken, not only the notifier's; a job committed just after that claim waits for the next
-- notification or the relay's idle poll. A lost notification only costs latency, never a job.
CREATE OR REPLACE FUNCTION outbox_notify_ready() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF pg_try_advisory_xact_lock(hashtext('outbox_ready'), hashtext(TG_TABLE_SCHEMA)) THEN
        PERFORM pg_notify('outbox_ready', TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END;
$$;
