-- The relay instance that made an attempt (see the PostgreSQL script).
ALTER TABLE outbox_attempt ADD COLUMN relay_instance VARCHAR(200);
