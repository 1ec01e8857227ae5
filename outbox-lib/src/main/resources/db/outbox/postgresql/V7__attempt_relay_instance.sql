-- The relay instance that made an attempt (host/pid/random, see docs/operations.md "The console"):
-- a claim token names one claim, this names the process, so an operator can tell which relay
-- sent, retried or lost a job. Null for attempts no relay made (an operator's cancel, an expired
-- lease) and for attempts recorded before this column existed.
ALTER TABLE outbox_attempt ADD COLUMN relay_instance VARCHAR(200);

-- The console's and admin API's lists of dead jobs (state D, any other filter, keyset pages in id
-- order) walk this small index instead of the whole primary key; only dead rows are in it.
CREATE INDEX ix_outbox_message_dead ON outbox_message (id) WHERE state = 'D';
