-- The relay instance that made an attempt (see the PostgreSQL script). NVARCHAR: a host name may
-- be any Unicode; nullable, so adding it is a metadata-only change.
ALTER TABLE outbox_attempt ADD relay_instance NVARCHAR(200);
