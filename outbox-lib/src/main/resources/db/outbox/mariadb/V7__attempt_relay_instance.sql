-- The relay instance that made an attempt (see the PostgreSQL script). Nullable, no default: an
-- instant metadata change on MariaDB, no table rebuild.
ALTER TABLE outbox_attempt ADD COLUMN relay_instance VARCHAR(200);
