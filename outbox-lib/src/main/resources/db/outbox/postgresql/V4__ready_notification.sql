-- Wakes idle relays when jobs are committed (LISTEN/NOTIFY), so the commit-to-sink latency does not
-- wait for the claim loop's idle poll. A statement-level trigger: one pg_notify per inserting
-- statement, and PostgreSQL folds identical notifications of one transaction into one, delivered
-- at commit (never for a rolled-back transaction). The payload is the outbox's schema, so relays of
-- another schema in the same database can ignore it. Only a latency hint: a lost notification
-- (relay not listening, connection broken) costs the idle wait, never a job; relays keep polling.
-- Jobs made ready later (retries: deliver_after in the future; replays, releases, expired leases)
-- are found by that polling.
CREATE OR REPLACE FUNCTION outbox_notify_ready() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('outbox_ready', TG_TABLE_SCHEMA);
    RETURN NULL;
END;
$$;

CREATE TRIGGER tr_outbox_message_ready AFTER INSERT ON outbox_message
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify_ready();
