-- Key-affine ordering (see the PostgreSQL script): key_wait marks a ready job that waits behind an
-- earlier unfinished job of its key; the claim scans only ready jobs that do not wait.
ALTER TABLE outbox_message ADD COLUMN key_wait BOOLEAN DEFAULT FALSE NOT NULL;

UPDATE outbox_message m SET key_wait = TRUE
    WHERE m.ordering_key IS NOT NULL AND m.state = 'R'
      AND EXISTS (SELECT 1 FROM outbox_message e WHERE e.ordering_key = m.ordering_key
                  AND e.id < m.id AND e.state IN ('R', 'W'));

CREATE INDEX ix_outbox_message_head ON outbox_message (state, key_wait, id);
-- A key's earliest and latest unfinished jobs without walking its finished history.
DROP INDEX ix_outbox_message_ordering;
CREATE INDEX ix_outbox_message_ordering ON outbox_message (ordering_key, state, id);
