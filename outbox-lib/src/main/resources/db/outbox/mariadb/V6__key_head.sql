-- Key-affine ordering (see the PostgreSQL script): key_wait marks a ready job that waits behind an
-- earlier unfinished job of its key; the claim scans only ready jobs that do not wait.
ALTER TABLE outbox_message ADD COLUMN key_wait BOOLEAN NOT NULL DEFAULT FALSE;

-- Existing rows. No sub-query on the updated table (error 1093): the waiting ids join in as a
-- derived table, which MariaDB materialises before it updates.
UPDATE outbox_message JOIN (SELECT m.id FROM outbox_message m
    WHERE m.ordering_key IS NOT NULL AND m.state = 'R'
      AND EXISTS (SELECT 1 FROM outbox_message e WHERE e.ordering_key = m.ordering_key
                  AND e.id < m.id AND e.state IN ('R', 'W'))) waiting
    ON waiting.id = outbox_message.id
    SET outbox_message.key_wait = TRUE;

-- Ready heads in id order (no partial indexes in MariaDB): the claim's ORDER BY id LIMIT n.
CREATE INDEX ix_outbox_message_head ON outbox_message (state, key_wait, id);
-- A key's earliest and latest unfinished jobs without walking its finished history.
DROP INDEX ix_outbox_message_ordering ON outbox_message;
CREATE INDEX ix_outbox_message_ordering ON outbox_message (ordering_key, state, id);
