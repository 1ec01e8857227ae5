-- Key-affine ordering (see the PostgreSQL script): key_wait (BIT, no BOOLEAN) marks a ready job
-- that waits behind an earlier unfinished job of its key; the claim scans only ready jobs that do
-- not wait. T-SQL's ADD takes no COLUMN keyword.
ALTER TABLE outbox_message ADD key_wait BIT NOT NULL
    CONSTRAINT df_outbox_message_key_wait DEFAULT 0;

UPDATE m SET key_wait = 1 FROM outbox_message m
    WHERE m.ordering_key IS NOT NULL AND m.state = 'R'
      AND EXISTS (SELECT 1 FROM outbox_message e WHERE e.ordering_key = m.ordering_key
                  AND e.id < m.id AND e.state IN ('R', 'W'));

-- Ready heads in clustered-key order; not a filtered index (see ix_outbox_message_ready in V1).
CREATE INDEX ix_outbox_message_head ON outbox_message (state, key_wait, id) INCLUDE (deliver_after, ordering_key);
-- A key's earliest and latest unfinished jobs without walking its finished history.
DROP INDEX ix_outbox_message_ordering ON outbox_message;
CREATE INDEX ix_outbox_message_ordering ON outbox_message (ordering_key, state, id);
