-- One index of unfinished jobs in place of two (docs/performance.md "Fewer indexes (V8)"). Since
-- V6 the claim walks ix_outbox_message_head and no statement seeks on deliver_after any more, so
-- ix_outbox_message_due (state, deliver_after, id) only served the backlog gauges' scan of ready
-- and leased rows, and ix_outbox_message_ready (id) WHERE state = 'R' only the console's ready
-- list and the claim's id seeks. One partial index on (state, id) over R and W serves all three:
-- the gauges read state IN ('R', 'W') from it, the ready list walks state = 'R' in id order, the
-- claim seeks (state = 'R', id = ANY(...)). History (S, C, D) is in neither. Every enqueue, and
-- every completion, writes one index entry less.
-- The build holds a write lock on outbox_message while it reads the unfinished rows, as V6 did.
DROP INDEX ix_outbox_message_due;
DROP INDEX ix_outbox_message_ready;
CREATE INDEX ix_outbox_message_ready ON outbox_message (state, id) WHERE state IN ('R', 'W');
