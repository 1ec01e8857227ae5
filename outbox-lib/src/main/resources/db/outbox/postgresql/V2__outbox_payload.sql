-- Large payloads by reference. A body over the producer's inline threshold is stored here, out
-- of band, and its job's payload column holds only a short reference, so outbox_message rows
-- and the claim's ready scan stay small; the relay loads the body by id just before the send.
-- payload_by_ref, not the reference text, says which jobs these are: a user payload that looks
-- like a reference is never resolved. Existing rows are inline (false).
ALTER TABLE outbox_message ADD COLUMN payload_by_ref BOOLEAN NOT NULL DEFAULT FALSE;

-- One body per job; deleting the job (retention) deletes its body.
CREATE TABLE outbox_payload (
    message_id  BIGINT   PRIMARY KEY REFERENCES outbox_message (id) ON DELETE CASCADE,
    body        TEXT     NOT NULL,
    -- UTF-8 length and lowercase hex SHA-256 of the body: the relay verifies both before a send,
    -- and an idempotent re-enqueue compares them instead of the whole body.
    size_bytes  INTEGER  NOT NULL,
    sha256      CHAR(64) NOT NULL,
    CONSTRAINT ck_outbox_payload_size CHECK (size_bytes >= 0)
);
