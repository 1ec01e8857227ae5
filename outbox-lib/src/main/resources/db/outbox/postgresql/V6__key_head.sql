-- Key-affine ordering (docs/design.md "Ordering keys"): key_wait is TRUE on a ready job that waits
-- behind an earlier unfinished (R or W) job of its ordering key, so "this job is its key's head" is
-- an index condition and a claim never walks the later jobs of a busy key. Set at enqueue (the
-- producer share-locks the key's latest unfinished job, so that job cannot finish unseen), cleared
-- by the transaction that finishes the key's earlier jobs (sent, dead, cancelled).
ALTER TABLE outbox_message ADD COLUMN key_wait BOOLEAN NOT NULL DEFAULT FALSE;

-- Existing rows: a ready job waits when an earlier job of its key is ready or leased.
UPDATE outbox_message m SET key_wait = TRUE
    WHERE m.ordering_key IS NOT NULL AND m.state = 'R'
      AND EXISTS (SELECT 1 FROM outbox_message e WHERE e.ordering_key = m.ordering_key
                  AND e.id < m.id AND e.state IN ('R', 'W'));

-- The claim's scan: ready jobs that are their key's head (or have no key), in id order.
CREATE INDEX ix_outbox_message_head ON outbox_message (id) WHERE state = 'R' AND key_wait = FALSE;
