-- The relay instance that made an attempt (host/pid/random, see docs/operations.md "The console"):
-- a claim token names one claim, this names the process, so an operator can tell which relay
-- sent, retried or lost a job. Null for attempts no relay made (an operator's cancel, an expired
-- lease) and for attempts recorded before this column existed.
ALTER TABLE outbox_attempt ADD COLUMN relay_instance VARCHAR(200);
